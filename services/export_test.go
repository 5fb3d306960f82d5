package services

// SetLockWaitHook makes m call fn whenever a start of a service has to wait
// for another process (or manager) that holds the service's lock.
func SetLockWaitHook(m *Manager, fn func(service string)) { m.lockWait = fn }
