package runtime

// CheckConfig validates config for p as Context.Plugin would (defaults
// filled, schema checked, decoded into p's config type) and applies nothing:
// a host checks a whole deployment with it before changing anything. It
// returns p's refusal as Plugin does (ErrInvalidPlugin), or a *ConfigError.
func CheckConfig(p Plugin, config any) error {
	s, err := specOf(p)
	if err != nil {
		return err
	}
	_, err = s.prepare(config)
	return err
}

// ConfigSchema returns the JSON Schema (draft 2020-12, without $schema) that
// p's config is validated against, or nil when p takes no config struct and
// its config is passed through unchecked. The caller must not modify it.
func ConfigSchema(p Plugin) ([]byte, error) {
	s, err := specOf(p)
	if err != nil {
		return nil, err
	}
	ct := s.config
	if ct == nil || ct.schema == nil {
		return nil, nil
	}
	if ct.err != nil {
		return nil, &ConfigError{Plugin: s.name, Err: ct.err}
	}
	return ct.schema.JSON(), nil
}
