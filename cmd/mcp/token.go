package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tokenEnv is the environment variable that can carry the bearer token.
const tokenEnv = "GORDIS_MCP_TOKEN"

// tokens are the bearer tokens the HTTP server accepts and where they came
// from, for the log (a path or the variable's name, never a token).
//
// The first source wins: --token-file (one token a line, so that each
// member of a team can have their own), then GORDIS_MCP_TOKEN, then the
// generated file under the user's state directory, created on first use
// and kept, so that a restart does not break the clients configured with it.
func tokens(file string) (toks []string, from string, err error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, "", fmt.Errorf("--token-file: %w", err)
		}
		if toks = strings.Fields(string(data)); len(toks) == 0 {
			return nil, "", fmt.Errorf("--token-file %s: no token in the file", file)
		}
		return toks, file, nil
	}
	if tok := strings.TrimSpace(os.Getenv(tokenEnv)); tok != "" {
		return []string{tok}, "$" + tokenEnv, nil
	}
	path, err := generatedTokenPath()
	if err != nil {
		return nil, "", err
	}
	tok, err := generatedToken(path)
	if err != nil {
		return nil, "", err
	}
	return []string{tok}, path, nil
}

// generatedTokenPath is gordis/mcp-token under $XDG_STATE_HOME, else under
// the user's configuration directory (os.UserConfigDir: ~/.config on
// Linux, ~/Library/Application Support on macOS, %AppData% on Windows).
func generatedTokenPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserConfigDir(); err != nil {
			return "", fmt.Errorf("no directory for the generated token (use --token-file or %s): %w", tokenEnv, err)
		}
	}
	return filepath.Join(dir, "gordis", "mcp-token"), nil
}

// generatedToken reads the token at path, or creates it (crypto/rand.Text:
// 26 base32 characters, 128 bits), in a file only its owner can read.
func generatedToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		if tok := strings.TrimSpace(string(data)); tok != "" {
			return tok, nil
		}
		return "", fmt.Errorf("the token file %s is empty: delete it to have a new token generated", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	tok := rand.Text()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", err
	}
	return tok, f.Close()
}
