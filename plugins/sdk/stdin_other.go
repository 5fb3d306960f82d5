//go:build !unix

package sdk

import "os"

// pollableStdin returns os.Stdin: only Unix pipes can join the poller.
func pollableStdin() *os.File { return os.Stdin }
