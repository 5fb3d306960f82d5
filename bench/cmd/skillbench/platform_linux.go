package main

// platformSupported reports why skillbench cannot measure here: on Linux it
// can.
func platformSupported() error { return nil }
