package mcptest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NPM returns node and an npm prefix holding pkg (a pinned "name@version"),
// installed once per machine into a cache directory keyed by pkg:
// $GORDIS_NPM_CACHE, else gordis/npm under the user's cache directory. It
// skips the test, saying why, under -short, without node and npm, or when
// the registry cannot be reached.
func NPM(t testing.TB, pkg string) (node, prefix string) {
	t.Helper()
	if testing.Short() {
		t.Skip("SKIPPED under -short: installs the npm package " + pkg)
	}
	node, errNode := exec.LookPath("node")
	npm, errNPM := exec.LookPath("npm")
	if errNode != nil || errNPM != nil {
		t.Skip("SKIPPED: node and npm are needed to run " + pkg)
	}
	root := os.Getenv("GORDIS_NPM_CACHE")
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("SKIPPED: no cache directory for %s: %v", pkg, err)
		}
		root = filepath.Join(dir, "gordis", "npm")
	}
	prefix = filepath.Join(root, strings.NewReplacer("/", "+", "@", "_").Replace(pkg))
	if _, err := os.Stat(prefix); err == nil {
		return node, prefix
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// Installed beside, then renamed into place: a test binary that runs
	// at the same time sees the whole prefix or none.
	tmp, err := os.MkdirTemp(root, "install-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", tmp, pkg).CombinedOutput(); err != nil {
		t.Skipf("SKIPPED: npm install %s failed (no registry?): %v\n%s", pkg, err, out)
	}
	if err := os.Rename(tmp, prefix); err != nil {
		if _, serr := os.Stat(prefix); serr != nil {
			t.Fatal(err)
		}
	}
	return node, prefix
}
