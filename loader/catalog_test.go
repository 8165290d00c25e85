package loader_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
)

func named(name string) runtime.Plugin {
	return runtime.Func(name, func(*runtime.Context) error { return nil })
}

func TestCatalog(t *testing.T) {
	cat, err := loader.NewCatalog(named("fslocal"), named("fspolicy"), named("toolfs"), named("toolsearch"), named("mcpclient"), named("mcpserver"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.Register(named("metrics")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cat.Names(), " "); got != "fslocal fspolicy mcpclient mcpserver metrics toolfs toolsearch" {
		t.Fatalf("Names() = %s", got)
	}
	if p, err := cat.Lookup("toolfs"); err != nil || p.Name() != "toolfs" {
		t.Fatalf("Lookup(toolfs) = %v, %v", p, err)
	}
	for _, tc := range []struct{ name, want string }{
		{"fslocl", `unknown plugin "fslocl" (did you mean "fslocal"?)`},
		{"toolsfs", `unknown plugin "toolsfs" (did you mean "toolfs"?)`},
		{"ToolFS", `unknown plugin "ToolFS" (did you mean "toolfs"?)`},
		{"mcp", `unknown plugin "mcp" (known: "fslocal", "fspolicy", "group", "mcpclient", "mcpserver", "metrics", "toolfs", "toolsearch")`},
		{"mcpservr", `unknown plugin "mcpservr" (did you mean "mcpserver"?)`},
		{"grup", `unknown plugin "grup" (did you mean "group"?)`},
	} {
		_, err := cat.Lookup(tc.name)
		if fmt.Sprint(err) != tc.want || !errors.Is(err, loader.ErrUnknownPlugin) {
			t.Errorf("Lookup(%s):\ngot  %v\nwant %s", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		p    runtime.Plugin
		want string
	}{
		{nil, "loader: nil plugin"},
		{named(""), "loader: plugin runtime.builtin has no name"},
		{named("group"), `loader: "group" is reserved for groups`},
		{named("toolfs"), `loader: two plugins named "toolfs"`},
	} {
		if err := cat.Register(tc.p); fmt.Sprint(err) != tc.want {
			t.Errorf("Register: got %v, want %s", err, tc.want)
		}
	}
	if _, err := loader.NewCatalog(named("a"), named("a")); fmt.Sprint(err) != `loader: two plugins named "a"` {
		t.Errorf("NewCatalog with a duplicate: %v", err)
	}
}
