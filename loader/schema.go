package loader

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gordis-run/gordis/runtime"
)

// Schema returns one JSON Schema (draft 2020-12) for a file of cat's
// plugins: a list of entries, each entry's config checked by its plugin's
// schema, chosen by name, groups holding lists again. An editor with a
// YAML language server completes and checks the file with it.
func Schema(cat *Catalog) ([]byte, error) {
	names := cat.Names()
	defs := map[string]any{}
	var cases []any
	for _, name := range names {
		p, err := cat.Lookup(name)
		if err != nil {
			return nil, err
		}
		s, err := runtime.ConfigSchema(p)
		if err != nil {
			return nil, fmt.Errorf("loader: schema of %q: %w", name, err)
		}
		if s == nil {
			continue // a config passed through unchecked
		}
		defs["plugin:"+name] = json.RawMessage(s)
		ref := strings.NewReplacer("~", "~0", "/", "~1").Replace("plugin:" + name) // a JSON Pointer token
		// A plugin whose defaults do not make a valid config needs one.
		required := runtime.CheckConfig(p, nil) != nil
		cases = append(cases, when(name, map[string]any{"$ref": "#/$defs/" + ref}, required))
	}
	cases = append(cases, when(Group, map[string]any{"$ref": "#/$defs/entries"}, false))
	defs["entries"] = map[string]any{
		"type":  []string{"array", "null"},
		"items": map[string]any{"$ref": "#/$defs/entry"},
	}
	defs["entry"] = map[string]any{
		"type":     "object",
		"required": []string{"name"},
		"properties": map[string]any{
			"id": map[string]any{
				"type": "string", "minLength": 1,
				"description": "Unique in the file; generated and written back when absent.",
			},
			"name": map[string]any{
				"enum":        append(names, Group),
				"description": "The plugin, from the catalogue, or group for a list of entries.",
			},
			"config": map[string]any{"description": "The plugin's config; ${VAR} and ${VAR:-default} read the environment."},
			"disabled": map[string]any{
				"type":        "boolean",
				"description": "Keep the entry in the file without applying it.",
			},
			"inject": map[string]any{
				"type":        "array",
				"items":       map[string]any{"type": "string", "minLength": 1},
				"description": "Services the entry waits for besides its plugin's own.",
			},
			"isolate": map[string]any{
				"type": "object",
				"additionalProperties": map[string]any{
					"type": []string{"boolean", "string"}, "minLength": 1,
				},
				"description": "Per service: true for a domain of the entry's own, a label for one shared with the entries of that label.",
			},
			"intercept": map[string]any{
				"type":                 "object",
				"additionalProperties": map[string]any{"type": "object"},
				"description":          "Per service: a config layer for the entry and what it plugs.",
			},
		},
		"additionalProperties": false,
		"allOf":                cases,
	}
	return json.MarshalIndent(map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title":   "gordis config file",
		"$ref":    "#/$defs/entries",
		"$defs":   defs,
	}, "", "  ")
}

// when is the case of the entries named name: their config is checked by
// config, and must be given when required.
func when(name string, config map[string]any, required bool) map[string]any {
	then := map[string]any{"properties": map[string]any{"config": config}}
	if required {
		then["required"] = []string{"config"}
	}
	return map[string]any{
		"if": map[string]any{
			"properties": map[string]any{"name": map[string]any{"const": name}},
			"required":   []string{"name"},
		},
		"then": then,
	}
}
