package loader_test

import (
	"testing"
)

// A file written with CRLF line ends loads, and what the loader writes
// back (a generated id, a self-update, a self-dispose) ends its lines the
// same way.
func TestCRLFFile(t *testing.T) {
	l, rec, file := setup(t, "# gordis\r\n- name: counter\r\n  config:\r\n    greeting: a # kept\r\n- id: b\r\n  name: live\r\n")
	expect(t, rec, "apply counter a 0", "apply live hi 0")
	want := "# gordis\r\n- id: counter-fd5e\r\n  name: counter\r\n  config:\r\n    greeting: a # kept\r\n- id: b\r\n  name: live\r\n"
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%q\nwant:\n%q", got, want)
	}
	if err := l.Fiber("b").Update(Config{Greeting: "hi", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	if err := l.Fiber("counter-fd5e").Dispose(); err != nil {
		t.Fatal(err)
	}
	want = "# gordis\r\n- id: counter-fd5e\r\n  name: counter\r\n  config:\r\n    greeting: a # kept\r\n  disabled: true\r\n- id: b\r\n  name: live\r\n  config:\r\n    limit: 3\r\n"
	if got := read(t, file); got != want {
		t.Fatalf("file:\n%q\nwant:\n%q", got, want)
	}
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(t, rec, "update live hi 3", "dispose counter a")
}

// An empty file, or one of comments only, is an empty list; emptying a
// file disposes every entry, and filling it plugs them again.
func TestEmptyFile(t *testing.T) {
	for _, text := range []string{"", "\n", "# nothing yet\n", "[]\n"} {
		l, rec, file := setup(t, text)
		expect(t, rec)
		rewrite(t, l, file, "- {id: a, name: counter, config: {greeting: a}}\n")
		rewrite(t, l, file, text)
		expect(t, rec, "apply counter a 0", "dispose counter a")
	}
}
