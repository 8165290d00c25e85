package loader_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/runtime"
)

func Example() {
	type greeterConfig struct {
		Greeting string `json:"greeting,omitempty" jsonschema:"default=hello"`
	}
	greeter := runtime.Configured("greeter", func(ctx *runtime.Context, c greeterConfig) error {
		fmt.Println("greeter:", c.Greeting)
		return nil
	})
	cat, err := loader.NewCatalog(greeter)
	if err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "gordis.yaml")
	_ = os.WriteFile(file, []byte("- {id: hi, name: greeter, config: {greeting: hi}}\n"), 0o644)

	root := runtime.New()
	defer root.Close()
	l, err := loader.Open(root, file, cat)
	if err != nil {
		panic(err)
	}
	defer l.Close()

	_ = os.WriteFile(file, []byte("- {id: hi, name: greetr, config: {greeting: hey}}\n"), 0o644)
	fmt.Println(l.Reload() != nil) // an unknown name: nothing changes

	_ = os.WriteFile(file, []byte("- {id: hi, name: greeter, config: {greeting: hey}}\n"), 0o644)
	if err := l.Reload(); err != nil {
		panic(err)
	}
	// Output:
	// greeter: hi
	// true
	// greeter: hey
}
