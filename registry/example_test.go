package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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

type noteArgs struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// A caller that is done with a call's argument bytes hands them over: the
// long text is decoded where it stands instead of into a copy, and Args
// become a copy in which it is cut.
func ExampleCall_handOverArgs() {
	root := runtime.New()
	defer root.Close()
	tools := registry.New(root, registry.Config{})
	note, err := registry.Define("note", "Keep a note.",
		func(_ context.Context, _ *registry.Call, a noteArgs) (int, error) {
			return strings.Count(a.Text, "\n"), nil
		}, nil)
	if err != nil {
		panic(err)
	}
	if err := tools.Register(root, note); err != nil {
		panic(err)
	}

	// A line of input, read into storage of its own and not read again.
	line, _ := json.Marshal(noteArgs{Path: "notes.txt", Text: strings.Repeat("a line of text\n", 10_000)})
	call := &registry.Call{ID: "1", Tool: "note", Args: line, HandOverArgs: true}
	res := tools.Execute(context.Background(), call)
	fmt.Println(res.Text)
	fmt.Printf("%d bytes: %s ... %s\n", len(call.Args), call.Args[:44], call.Args[len(call.Args)-26:])
	// Output:
	// 10000
	// 1144 bytes: {"path":"notes.txt","text":"a line of text\n ... li…(148976 bytes more)"}
}
