package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/gordis-run/gordis/internal/schema"
)

// Define builds a typed tool: arguments decode into A after schema
// validation; the value V renders with render.
//
// The parameters schema is derived from A (a struct): fields without
// omitempty are required, and unknown keys are ignored. Declare numbers the
// tool checks itself as *float64 or json.Number so that 1.5 or null reach it
// as written (an int field turns 1.5 into an invalid-arguments error). A nil
// render shows the value as the registry's default does. Describe options
// set parameter descriptions that depend on configuration.
func Define[A, V any](name, description string, run func(ctx context.Context, call *Call, args A) (V, error), render func(V) string, opts ...DefineOption) (Tool, error) {
	if run == nil {
		return Tool{}, fmt.Errorf("registry: tool %q has no run function", name)
	}
	derive := schema.Options{Open: true}
	for _, o := range opts {
		o(&derive)
	}
	args, err := schema.For(reflect.TypeFor[A](), derive)
	if err != nil {
		return Tool{}, fmt.Errorf("registry: tool %q: %w", name, err)
	}
	t := Tool{
		Name:        name,
		Description: description,
		Parameters:  args.JSON(),
		compiled:    args,
		Execute: func(ctx context.Context, call *Call) (any, error) {
			var a A
			if err := json.Unmarshal(call.Args, &a); err != nil {
				return nil, decodeError(err)
			}
			return run(ctx, call, a)
		},
	}
	if render != nil {
		t.Render = func(value any) string {
			v, _ := value.(V)
			return render(v)
		}
	}
	return t, nil
}

// DefineOption adjusts how Define derives a tool's parameters.
type DefineOption func(*schema.Options)

// Describe sets the description of parameter param (its JSON name), in place
// of its struct tag's: for text that names a configured value.
func Describe(param, text string) DefineOption {
	return func(o *schema.Options) {
		if o.Descriptions == nil {
			o.Descriptions = make(map[string]string)
		}
		o.Descriptions[param] = text
	}
}
