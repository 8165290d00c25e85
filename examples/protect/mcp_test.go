package protect_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis/examples/protect"
	"github.com/gordis-run/gordis/internal/mcptest"
	"github.com/gordis-run/gordis/plugins/mcpclient"
)

// filesServer is an MCP server in the manner of server-filesystem: its
// paths are absolute or relative to the workspace, its hints say which
// tools change files, and nothing in the protocol says which arguments are
// paths.
func filesServer(ws string) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "v1"}, nil)
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(ws, p)
	}
	done := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	yes := true
	type writeArgs struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "write_file", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			return done, nil, os.WriteFile(abs(a.Path), []byte(a.Content), 0o644)
		})
	type moveArgs struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "move_file"},
		func(_ context.Context, _ *mcp.CallToolRequest, a moveArgs) (*mcp.CallToolResult, any, error) {
			return done, nil, os.Rename(abs(a.Source), abs(a.Destination))
		})
	type readArgs struct {
		Path string `json:"path"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "read_text_file", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a readArgs) (*mcp.CallToolResult, any, error) {
			b, err := os.ReadFile(abs(a.Path))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, err
		})
	type noteArgs struct {
		Text string `json:"text"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "notify"},
		func(context.Context, *mcp.CallToolRequest, noteArgs) (*mcp.CallToolResult, any, error) {
			return done, nil, nil
		})
	return server
}

// importFiles plugs protect with cfg, then mcpclient with filesServer
// under the prefix "sfs_" and the given path declarations.
func importFiles(t *testing.T, cfg protect.Config, paths map[string][]string) *stack {
	t.Helper()
	s := newStack(t)
	s.plug(t, cfg)
	server := filesServer(s.Workspace)
	f, err := s.Root.Plugin(mcpclient.New(mcpclient.Config{Prefix: "sfs_", Paths: paths}, func() mcp.Transport {
		serverT, clientT := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), serverT, nil); err != nil {
			t.Error(err)
		}
		return clientT
	}), nil)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var filesPaths = map[string][]string{"write_file": {"path"}, "move_file": {"source", "destination"}, "notify": {}}

// TestImportedTools: an imported tool that changes files is refused until
// its path arguments are declared, then judged by them like a local tool;
// AllowUnknownPaths restores the old leniency.
func TestImportedTools(t *testing.T) {
	type step struct {
		tool string
		args map[string]string
		want string // the result's text; "" for any success
	}
	unknown := func(tool string) string {
		return "Error: cannot " + tool + ": the tool does not say which files it changes, so it could change a protected file"
	}
	protected := func(tool, path, pattern string) string {
		return `Error: cannot ` + tool + ` "` + path + `": it is protected by the pattern "` + pattern + `"`
	}
	for _, tc := range []struct {
		name   string
		config protect.Config
		paths  map[string][]string
		steps  func(ws string) []step
		files  map[string]string // what the workspace holds afterwards; "" for absent
	}{
		{"undeclared", config, nil, func(ws string) []step {
			return []step{
				{"sfs_write_file", map[string]string{"path": ws + "/.env", "content": "x"}, unknown("sfs_write_file")},
				{"sfs_write_file", map[string]string{"path": ws + "/todo.txt", "content": "x"}, unknown("sfs_write_file")},
				{"sfs_move_file", map[string]string{"source": ws + "/.env", "destination": ws + "/env.txt"}, unknown("sfs_move_file")},
				{"sfs_notify", map[string]string{"text": "hi"}, unknown("sfs_notify")},
				{"sfs_read_text_file", map[string]string{"path": ws + "/.env"}, "KEY=1\n"},
			}
		}, map[string]string{".env": "KEY=1\n", "todo.txt": "", "env.txt": ""}},
		{"declared", config, filesPaths, func(ws string) []step {
			return []step{
				{"sfs_write_file", map[string]string{"path": ws + "/.env", "content": "x"}, protected("sfs_write_file", ws+"/.env", ".env")},
				{"sfs_write_file", map[string]string{"path": ".env", "content": "x"}, protected("sfs_write_file", ws+"/.env", ".env")},
				{"sfs_write_file", map[string]string{"path": ws + "/config/prod/app.yml", "content": "x"}, protected("sfs_write_file", ws+"/config/prod/app.yml", "config/prod")},
				{"sfs_move_file", map[string]string{"source": ws + "/.env", "destination": ws + "/env.txt"}, protected("sfs_move_file", ws+"/.env", ".env")},
				{"sfs_move_file", map[string]string{"source": ws + "/notes.txt", "destination": ws + "/go.lock"}, protected("sfs_move_file", ws+"/go.lock", "*.lock")},
				{"sfs_write_file", map[string]string{"path": ws + "/todo.txt", "content": "x"}, "done"},
				{"sfs_move_file", map[string]string{"source": ws + "/todo.txt", "destination": ws + "/done.txt"}, "done"},
				{"sfs_notify", map[string]string{"text": "hi"}, "done"},
				{"sfs_write_file", map[string]string{"path": "/outside/x.txt", "content": "x"}, `Error: permission check failed: cannot resolve "/outside/x.txt": outside the workspace "` + ws + `"`},
			}
		}, map[string]string{".env": "KEY=1\n", "config/prod/app.yml": "a: 1\n", "notes.txt": "notes\n", "go.lock": "", "todo.txt": "", "done.txt": "x"}},
		{"allowed unknown", protect.Config{Patterns: config.Patterns, AllowUnknownPaths: true}, nil, func(ws string) []step {
			return []step{{"sfs_write_file", map[string]string{"path": ws + "/.env", "content": "x"}, "done"}}
		}, map[string]string{".env": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := importFiles(t, tc.config, tc.paths)
			for _, st := range tc.steps(s.Workspace) {
				res := s.run(st.tool, st.args)
				if res.Text != st.want {
					t.Errorf("%s %v = %q, want %q", st.tool, st.args, res.Text, st.want)
				}
				if strings.HasPrefix(st.want, "Error: ") && (res.Error == nil || res.Error.Code != "TOOL_DENIED") {
					t.Errorf("%s %v: error %+v, want TOOL_DENIED", st.tool, st.args, res.Error)
				}
			}
			for name, want := range tc.files {
				if b, _ := os.ReadFile(filepath.Join(s.Workspace, name)); string(b) != want {
					t.Errorf("%s = %q, want %q", name, b, want)
				}
			}
		})
	}
}

// sfsPackage is the npm package of the reference filesystem server, pinned
// (cmd/mcp/bench measures the same version).
const sfsPackage = "@modelcontextprotocol/server-filesystem@2026.8.31"

// TestServerFilesystem is TestImportedTools against the real
// server-filesystem, run with node: the hole issue 16 reported, closed.
func TestServerFilesystem(t *testing.T) {
	node, dir := mcptest.NPM(t, sfsPackage)
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")

	sfs := func(t *testing.T, paths map[string][]string) (*stack, error) {
		s := newStack(t)
		s.plug(t, config)
		f, err := s.Root.Plugin(mcpclient.Plugin, mcpclient.Config{Prefix: "sfs_", Command: []string{node, script, s.Workspace}, Paths: paths})
		if err == nil {
			err = f.Wait()
		}
		return s, err
	}
	envIntact := func(t *testing.T, s *stack) {
		t.Helper()
		if b, _ := os.ReadFile(filepath.Join(s.Workspace, ".env")); string(b) != "KEY=1\n" {
			t.Errorf(".env = %q: a denied call ran", b)
		}
	}

	t.Run("undeclared", func(t *testing.T) {
		s, err := sfs(t, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := s.run("sfs_write_file", map[string]string{"path": s.Workspace + "/.env", "content": "x"})
		if want := "Error: cannot sfs_write_file: the tool does not say which files it changes, so it could change a protected file"; res.Text != want {
			t.Errorf("sfs_write_file = %q, want %q", res.Text, want)
		}
		envIntact(t, s)
	})

	t.Run("declared", func(t *testing.T) {
		s, err := sfs(t, map[string][]string{
			"write_file": {"path"}, "edit_file": {"path"}, "create_directory": {"path"}, "move_file": {"source", "destination"},
		})
		if err != nil {
			t.Fatal(err)
		}
		ws := s.Workspace
		for _, tc := range []struct {
			tool string
			args map[string]any
			path string
		}{
			{"sfs_write_file", map[string]any{"path": ws + "/.env", "content": "x"}, ws + "/.env"},
			{"sfs_write_file", map[string]any{"path": ".env", "content": "x"}, ws + "/.env"},
			{"sfs_edit_file", map[string]any{"path": ws + "/.env", "edits": []map[string]string{{"oldText": "1", "newText": "2"}}}, ws + "/.env"},
			{"sfs_move_file", map[string]any{"source": ws + "/.env", "destination": ws + "/env.txt"}, ws + "/.env"},
		} {
			res := s.run(tc.tool, tc.args)
			if want := `Error: cannot ` + tc.tool + ` "` + tc.path + `": it is protected by the pattern ".env"`; res.Text != want {
				t.Errorf("%s %v = %q, want %q", tc.tool, tc.args, res.Text, want)
			}
		}
		envIntact(t, s)
		if res := s.run("sfs_write_file", map[string]any{"path": ws + "/todo.txt", "content": "x"}); res.IsError {
			t.Errorf("sfs_write_file todo.txt: %q", res.Text)
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "todo.txt")); string(b) != "x" {
			t.Errorf("todo.txt = %q", b)
		}
	})

	for _, tc := range []struct {
		name  string
		paths map[string][]string
		want  string
	}{
		{"misspelt tool", map[string][]string{"write": {"path"}},
			`mcpclient sfs_: paths: the server has no tool "write" (its tools: create_directory, directory_tree, edit_file, get_file_info, list_allowed_directories, list_directory, list_directory_with_sizes, move_file, read_file, read_media_file, read_multiple_files, read_text_file, search_files, write_file)`},
		{"misspelt argument", map[string][]string{"write_file": {"file"}},
			`mcpclient sfs_: tool "write_file": paths: "file" is not a string argument (its string arguments: content, path)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sfs(t, tc.paths); err == nil || err.Error() != tc.want {
				t.Errorf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}
