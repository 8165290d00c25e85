package peakrss

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
)

// Memory is what /proc/PID/status says of a process's resident memory, in
// bytes: now (VmRSS), its high-water mark (VmHWM), and how much of it is
// anonymous (RssAnon: the heap and stacks, its own, where the rest maps
// files, such as the executable, that processes running it share).
type Memory struct{ RSS, HWM, Anon int64 }

// Status reads the resident memory of the live process pid; it fails
// where /proc does not say (anything but Linux).
func Status(pid int) (Memory, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	return parseStatus(status)
}

// parseStatus reads VmRSS, VmHWM and RssAnon from the text of
// /proc/PID/status.
func parseStatus(status []byte) (Memory, error) {
	var m Memory
	var rss, hwm, anon bool
	for line := range bytes.Lines(status) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(name) {
		case "VmRSS":
			dst, rss = &m.RSS, true
		case "VmHWM":
			dst, hwm = &m.HWM, true
		case "RssAnon":
			dst, anon = &m.Anon, true
		default:
			continue
		}
		kib, ok := bytes.CutSuffix(bytes.TrimSpace(value), []byte(" kB"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(kib)), 10, 64)
		if !ok || err != nil || n < 0 || n > math.MaxInt64>>10 {
			return Memory{}, fmt.Errorf("/proc status: malformed %s line %q", name, bytes.TrimSpace(line))
		}
		*dst = n << 10
	}
	if !rss || !hwm || !anon {
		return Memory{}, errors.New("/proc status: no VmRSS, VmHWM or RssAnon line (a kernel thread, or not Linux)")
	}
	return m, nil
}
