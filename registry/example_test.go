package registry_test

import (
	"context"
	"fmt"

	"github.com/gordis-run/gordis/registry"
	"github.com/gordis-run/gordis/runtime"
)

type greetArgs struct {
	Name  string   `json:"name" jsonschema:"description=Who to greet"`
	Times *float64 `json:"times,omitempty"`
}

func ExampleDefine() {
	root := runtime.New()
	defer root.Close()
	tools := registry.New(root, registry.Config{})

	greet, err := registry.Define("greet", "Greet someone.",
		func(_ context.Context, _ *registry.Call, a greetArgs) (string, error) {
			if a.Times != nil && *a.Times != 1 {
				return "", fmt.Errorf("times must be 1, got %v", *a.Times)
			}
			return "hello " + a.Name, nil
		}, nil)
	if err != nil {
		panic(err)
	}
	if err := tools.Register(root, greet); err != nil {
		panic(err)
	}
	fmt.Println(string(tools.Definitions()[0].Parameters))

	ctx := context.Background()
	for _, args := range []string{`{"name":"Ada"}`, `{"name":"Ada","times":1.5}`, `{"times":"x"}`} {
		res := tools.Execute(ctx, &registry.Call{ID: "1", Tool: "greet", Args: []byte(args)})
		fmt.Println(res.Text)
	}
	// Output:
	// {"properties":{"name":{"type":"string","description":"Who to greet"},"times":{"type":"number"}},"type":"object","required":["name"]}
	// hello Ada
	// Error: times must be 1, got 1.5
	// Error: invalid arguments: missing required property "name"; "times" must be a number
}
