package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag of bytes: a count, or one with a KiB, MiB or GiB suffix.
type byteSize int64

var units = []struct {
	suffix string
	shift  uint
}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"", 0}}

func (b *byteSize) Set(s string) error {
	for _, u := range units {
		digits, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n <= 0 || n > (1<<62)>>u.shift {
			break
		}
		*b = byteSize(n << u.shift)
		return nil
	}
	return fmt.Errorf("want a positive number of bytes, with KiB, MiB or GiB as a suffix if you like")
}

func (b byteSize) String() string {
	for _, u := range units {
		if b%(1<<u.shift) == 0 && b != 0 {
			return strconv.FormatInt(int64(b)>>u.shift, 10) + u.suffix
		}
	}
	return "0"
}
