package toolfs_test

import (
	"testing"
)

// the escalation pair is checked, and refused, before anything is
// resolved, by all four tools; a key given as null counts as absent; the
// schemas advertise neither key (TestRegistration pins them).
func TestEscalationRefused(t *testing.T) {
	e := setup(t, options{})
	e.write(t, "a.txt", "alpha\n")
	s := newSession(e.dir)
	const (
		unpaired   = "Error: invalid escalation: sandbox_permissions requires a justification"
		alone      = "Error: invalid escalation: justification is only valid together with sandbox_permissions"
		blank      = "Error: invalid justification: expected a non-empty sentence"
		notOffered = "Error: sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)"
	)
	for _, c := range []struct {
		name string
		esc  map[string]any
		want string
	}{
		{"permissions alone", map[string]any{"sandbox_permissions": "workspace-write"}, unpaired},
		{"permissions with a null justification", map[string]any{"sandbox_permissions": "workspace-write", "justification": nil}, unpaired},
		{"justification alone", map[string]any{"justification": "I need it."}, alone},
		{"blank justification", map[string]any{"sandbox_permissions": "workspace-write", "justification": "  "}, blank},
		{"justification not a string", map[string]any{"sandbox_permissions": "workspace-write", "justification": 3}, blank},
		{"the pair", map[string]any{"sandbox_permissions": "workspace-write", "justification": "The file is outside."}, notOffered},
		// Checked before resolve: a missing file does not change the answer.
		{"the pair on a missing path", map[string]any{"sandbox_permissions": "danger", "justification": "Why not."}, notOffered},
	} {
		for _, tool := range []string{"list", "read", "write", "edit"} {
			t.Run(c.name+"/"+tool, func(t *testing.T) {
				args := map[string]any{}
				path := "a.txt"
				if c.name == "the pair on a missing path" {
					path = "missing/b.txt"
				}
				switch tool {
				case "list":
					args["path"] = "."
				case "read":
					args["file_path"] = path
				case "write":
					args["file_path"], args["content"] = path, "beta\n"
				case "edit":
					args["file_path"], args["old_string"], args["new_string"] = path, "alpha", "beta"
				}
				for k, v := range c.esc {
					args[k] = v
				}
				wantError(t, e.call(s, tool, args), c.want, "")
				if got := e.content(t, "a.txt"); got != "alpha\n" {
					t.Fatalf("a.txt = %q after a refused call", got)
				}
			})
		}
	}
	// Without the keys, or with both null, nothing changes.
	wantText(t, e.call(s, "read", map[string]any{"file_path": "a.txt", "sandbox_permissions": nil, "justification": nil}),
		"<path>"+e.path("a.txt")+"</path>\n<type>file</type>\n<content>\n1: alpha\n\n(End of file - total 1 lines)\n</content>")
}
