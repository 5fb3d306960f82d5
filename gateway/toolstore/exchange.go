package toolstore

import "os"

// exchangeByRename swaps a and b with three renames; b is missing for a
// moment, which a watcher may see as a delete and an add.
func exchangeByRename(a, b string) error {
	side := a + ".swap"
	if err := os.Rename(b, side); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		_ = os.Rename(side, b)
		return err
	}
	return os.Rename(side, a)
}
