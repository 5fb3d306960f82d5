//go:build !linux

package toolstore

func exchange(a, b string) error { return exchangeByRename(a, b) }
