package main

import (
	"fmt"
	"io"
)

// runReplay is a placeholder until replay.go lands (it replaces this file).
func runReplay(_ []string, _ io.Reader, _ io.Writer, stderr io.Writer) int {
	fmt.Fprintln(stderr, "demo: replay is not available yet")
	return 2
}
