package peakrss

import "testing"

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         Memory
		err          string
	}{
		{"linux", "Name:\tmcp\nVmPeak:\t 1266740 kB\nVmHWM:\t   35840 kB\nVmRSS:\t   31744 kB\nRssAnon:\t   20224 kB\nRssFile:\t   11520 kB\nThreads:\t7\n", Memory{RSS: 31744 << 10, HWM: 35840 << 10, Anon: 20224 << 10}, ""},
		{"no trailing newline", "VmRSS:\t1 kB\nVmHWM:\t2 kB\nRssAnon:\t0 kB", Memory{RSS: 1 << 10, HWM: 2 << 10}, ""},
		{"kernel thread", "Name:\tkthreadd\nThreads:\t1\n", Memory{}, "/proc status: no VmRSS, VmHWM or RssAnon line (a kernel thread, or not Linux)"},
		{"one line twice, another missing", "VmRSS:\t1 kB\nVmRSS:\t2 kB\nRssAnon:\t1 kB\n", Memory{}, "/proc status: no VmRSS, VmHWM or RssAnon line (a kernel thread, or not Linux)"},
		{"no unit", "VmRSS:\t31744\nVmHWM:\t35840 kB\n", Memory{}, `/proc status: malformed VmRSS line "VmRSS:\t31744"`},
		{"not a number", "VmRSS:\tmany kB\nVmHWM:\t35840 kB\n", Memory{}, `/proc status: malformed VmRSS line "VmRSS:\tmany kB"`},
		{"negative", "VmRSS:\t-1 kB\nVmHWM:\t35840 kB\n", Memory{}, `/proc status: malformed VmRSS line "VmRSS:\t-1 kB"`},
		{"too large for bytes", "VmRSS:\t9223372036854775807 kB\n", Memory{}, `/proc status: malformed VmRSS line "VmRSS:\t9223372036854775807 kB"`},
	} {
		got, err := parseStatus([]byte(tc.status))
		var msg string
		if err != nil {
			msg = err.Error()
		}
		if got != tc.want || msg != tc.err {
			t.Errorf("%s: got %+v, %q; want %+v, %q", tc.name, got, msg, tc.want, tc.err)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("VmHWM:\t   35840 kB\nVmRSS:\t   31744 kB\nRssAnon:\t20224 kB\n"))
	f.Add([]byte("VmRSS: 9007199254740991 kB\nVmHWM: 0 kB\nRssAnon: 1 kB\n"))
	f.Fuzz(func(t *testing.T, status []byte) {
		m, err := parseStatus(status)
		if err == nil && (m.RSS < 0 || m.HWM < 0 || m.Anon < 0) {
			t.Fatalf("parseStatus(%q) = %+v: a negative size", status, m)
		}
	})
}
