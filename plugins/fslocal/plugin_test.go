package fslocal

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gordis-run/gordis/plugins/fs"
	"github.com/gordis-run/gordis/runtime/runtimetest"
)

func TestPlugin(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := runtimetest.New(t)
	fiber := runtimetest.Plug(t, root, Plugin, Config{Cwd: dir})
	fsys, ok := fs.Service.Lookup(root)
	if !ok {
		t.Fatal("the fs service is not provided")
	}
	tg, err := fsys.Resolve(context.Background(), "a.txt", "")
	if err != nil {
		t.Fatal(err)
	}
	if text, err := fsys.ReadText(context.Background(), tg); err != nil || text != "hi" {
		t.Fatalf("ReadText through the service = %q, %v", text, err)
	}
	// Confined by default.
	if _, err := fsys.Resolve(context.Background(), "../x", ""); fs.CodeOf(err) != fs.CodeSandboxDenied {
		t.Errorf("Resolve(../x) = %v, want FS_SANDBOX_DENIED", err)
	}
	if err := fiber.Dispose(); err != nil {
		t.Fatal(err)
	}
	if _, ok := fs.Service.Lookup(root); ok {
		t.Error("the fs service outlived its plugin")
	}
	if _, err := fsys.ReadText(context.Background(), tg); err == nil {
		t.Error("the disposed plugin's provider still reads: its roots are not released")
	}
}

func TestPluginDefaultCwd(t *testing.T) {
	wd, _ := os.Getwd()
	root := runtimetest.New(t)
	runtimetest.Plug(t, root, Plugin, nil)
	fsys, _ := fs.Service.Lookup(root)
	if local, ok := fsys.(*FS); !ok || local.Cwd() != wd {
		t.Fatalf("service = %#v, want *FS at %s", fsys, wd)
	}
}
