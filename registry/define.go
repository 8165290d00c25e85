package registry

import (
	"context"
	"fmt"
	"reflect"

	"github.com/gordis-run/gordis/internal/schema"
)

// Define builds a typed tool: arguments are validated against the schema
// and decoded into A; the value V renders with render.
//
// The parameters schema is derived from A (a struct): fields without
// omitempty are required, and unknown keys are ignored. Top-level keys
// match the JSON names exactly, and a declared key given twice is invalid.
// For flat arguments (strings, numbers and booleans, plain or as pointers)
// the registry validates and decodes in one pass, copying each string once.
//
// Declare numbers the tool checks itself as *float64 or json.Number so that
// 1.5 reaches it as written (an int field turns 1.5 into an
// invalid-arguments error). A nil render shows the value as the registry's
// default does. Describe options set parameter descriptions that depend on
// configuration.
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
	dec, err := args.Decoder(reflect.TypeFor[A]())
	if err != nil {
		return Tool{}, fmt.Errorf("registry: tool %q: %w", name, err)
	}
	decode := func(raw []byte, inPlace func(string, int) bool) (any, []schema.Span, error) {
		var a A
		spans, err := dec.DecodeInPlace(raw, &a, inPlace)
		if err != nil {
			return nil, nil, argsError(err)
		}
		return a, spans, nil
	}
	t := Tool{
		Name:        name,
		Description: description,
		Parameters:  args.JSON(),
		typed:       &typedArgs{schema: args, decode: decode},
		// The registry has decoded the arguments already; a caller that
		// runs Execute itself, or hands it other bytes, decodes here.
		Execute: func(ctx context.Context, call *Call) (any, error) {
			a, ok := call.decoded.of(call.Args).(A)
			if !ok {
				v, _, err := decode(call.Args, nil)
				if err != nil {
					return nil, err
				}
				a = v.(A)
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
