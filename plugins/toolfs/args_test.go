package toolfs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gordis-run/gordis/internal/schema"
	"github.com/gordis-run/gordis/registry"
)

// decode mirrors the registry: arguments are validated against the schema
// derived from A and decoded into it.
func decode[A any](t *testing.T, raw string) A {
	t.Helper()
	s, err := schema.For(reflect.TypeFor[A](), schema.Options{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Decoder(reflect.TypeFor[A]())
	if err != nil {
		t.Fatal(err)
	}
	var a A
	if err := d.Decode([]byte(raw), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestArgValidation(t *testing.T) {
	for _, tt := range []struct {
		name, tool, args, want string
	}{
		{"R-011 blank file_path (read)", "read", `{"file_path":"   "}`, "file_path must be a non-empty string"},
		{"R-011 blank file_path (write)", "write", `{"file_path":"","content":"x"}`, "file_path must be a non-empty string"},
		{"R-011 blank file_path (edit)", "edit", `{"file_path":"\t\n","old_string":"a","new_string":"b"}`, "file_path must be a non-empty string"},
		{"R-011 JS trim strips U+FEFF and Zs", "read", `{"file_path":"\ufeff\u3000\u2028\u00a0"}`, "file_path must be a non-empty string"},
		{"R-011 JS trim keeps U+0085", "read", `{"file_path":"\u0085"}`, ""},
		{"R-012 blank path", "list", `{"path":" "}`, "path must be a non-empty string when given"},
		{"R-032 path and offset default", "list", `{}`, ""},
		{"R-013 zero offset", "list", `{"offset":0}`, "offset must be a positive integer"},
		{"R-013 fractional offset", "list", `{"offset":1.5}`, "offset must be a positive integer"},
		{"R-017 path checked before offset", "list", `{"path":"","offset":0}`, "path must be a non-empty string when given"},
		{"R-014 zero offset", "read", `{"file_path":"a","offset":0}`, "offset must be a positive integer"},
		{"R-014 fractional offset", "read", `{"file_path":"a","offset":1.5}`, "offset must be a positive integer"},
		{"R-015 zero limit", "read", `{"file_path":"a","limit":0}`, "limit must be a positive integer"},
		{"R-015 negative limit", "read", `{"file_path":"a","limit":-3}`, "limit must be a positive integer"},
		{"R-015 fractional limit", "read", `{"file_path":"a","limit":1.5}`, "limit must be a positive integer"},
		{"R-016 limit above the cap", "read", `{"file_path":"a","limit":2001}`, "limit must be less than or equal to 2000"},
		{"R-017 integer-valued floats", "read", `{"file_path":"a","offset":2.0,"limit":2e3}`, ""},
		{"R-017 read order: file_path first", "read", `{"file_path":"","offset":0,"limit":0}`, "file_path must be a non-empty string"},
		{"R-017 read order: offset before limit", "read", `{"file_path":"a","offset":0,"limit":0}`, "offset must be a positive integer"},
		{"R-018 empty old_string", "edit", `{"file_path":"a","old_string":"","new_string":"b"}`, "old_string must be a non-empty string"},
		{"R-018 a space is a valid old_string", "edit", `{"file_path":"a","old_string":" ","new_string":"b"}`, ""},
		{"R-019 identical strings", "edit", `{"file_path":"a","old_string":"x","new_string":"x"}`, "old_string and new_string must differ"},
		{"R-019 compared before CRLF handling", "edit", `{"file_path":"a","old_string":"x\r\n","new_string":"x\n"}`, ""},
		{"R-017 edit order: old_string empty before equality", "edit", `{"file_path":"a","old_string":"","new_string":""}`, "old_string must be a non-empty string"},
		{"R-020 empty content is valid", "write", `{"file_path":"a","content":""}`, ""},
		{"R-004 unknown keys are ignored", "edit", `{"file_path":"a","old_string":"x","new_string":"y","replaceAll":false}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			switch tt.tool {
			case "list":
				_, err = decode[listArgs](t, tt.args).parse()
			case "read":
				_, err = decode[readArgs](t, tt.args).parse(2000)
			case "write":
				err = decode[writeArgs](t, tt.args).validate()
			case "edit":
				err = decode[editArgs](t, tt.args).validate()
			}
			if got := errText(err); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// a configured readLimit is the default and the cap.
func TestReadLimitConfigured(t *testing.T) {
	req, err := decode[readArgs](t, `{"file_path":"a"}`).parse(2)
	if err != nil || req.limit != 2 || req.offset != 1 {
		t.Fatalf("got %+v, %v", req, err)
	}
	if _, err := decode[readArgs](t, `{"file_path":"a","limit":3}`).parse(2); errText(err) != "limit must be less than or equal to 2" {
		t.Fatalf("got %v", err)
	}
}

type cwdSession string

func (s cwdSession) ID() string            { return "s" }
func (s cwdSession) Cwd() string           { return string(s) }
func (s cwdSession) Done() <-chan struct{} { return nil }

// the session cwd keeps its spelling unless ".." is involved.
func TestSessionCwd(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(root, "real")
	link := filepath.Join(root, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	call := func(cwd string) *registry.Call { return &registry.Call{Session: cwdSession(cwd)} }
	for _, tt := range []struct {
		name string
		call *registry.Call
		path string
		want string
	}{
		{"no call", nil, "a", ""},
		{"no session", &registry.Call{}, "a", ""},
		{"empty cwd", call(""), "../a", ""},
		{"ordinary path keeps the link spelling", call(link), "a.txt", link},
		{"parent traversal resolves the cwd", call(link), "../parent.txt", real},
		{"backslash counts as a separator", call(link), `..\parent.txt`, real},
		{"dots inside a name are no segment", call(link), "a..b/..c", link},
		{"a cwd with .. is resolved", call(link + "/../link"), "a", real},
		{"realpath failure keeps the cwd", call(root + "/missing/.."), "a", root + "/missing/.."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := SessionCwd(tt.call, tt.path); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
