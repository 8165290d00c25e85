package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gordis-run/gordis/internal/mcptest"
)

// nodeSDK is the official TypeScript SDK version the interoperability test
// installs.
const nodeSDK = "@modelcontextprotocol/sdk@1.32.2"

const nodeClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, workspace] = process.argv.slice(2);
const client = new Client({ name: "node-interop", version: "0" });
await client.connect(new StdioClientTransport({ command, args: ["--workspace", workspace] }));
const listed = await client.listTools();
const read = await client.callTool({ name: "read", arguments: { file_path: "a.txt" } });
const edit = await client.callTool({ name: "edit", arguments: { file_path: "a.txt", old_string: "alpha", new_string: "beta" } });
const unread = await client.callTool({ name: "edit", arguments: { file_path: "b.txt", old_string: "b", new_string: "c" } });
const prompt = await client.getPrompt({ name: "system" });
console.log(JSON.stringify({
  tools: listed.tools.map((t) => [t.name, t.annotations?.readOnlyHint ?? false]),
  read, edit, unread,
  prompt: prompt.messages[0].content.text.length,
}));
await client.close();
`

// nodeScript writes source as a module beside the official npm client,
// installed once per machine (mcptest.NPM, which skips the test without
// node, npm or the registry); it returns node and the script.
func nodeScript(t *testing.T, source string) (node, script string) {
	t.Helper()
	node, prefix := mcptest.NPM(t, nodeSDK)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(prefix, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	return node, script
}

// TestNodeClient drives the command on stdio with the official npm client.
func TestNodeClient(t *testing.T) {
	node, script := nodeScript(t, nodeClient)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	ws := t.TempDir()
	for name, content := range map[string]string{"a.txt": "alpha\n", "b.txt": "b\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, node, script, binary, ws)
	var stderr mcptest.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s", err, stderr.String())
	}
	type result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool              `json:"isError"`
		StructuredContent map[string]string `json:"structuredContent"`
	}
	var got struct {
		Tools              [][2]any `json:"tools"`
		Read, Edit, Unread result
		Prompt             int `json:"prompt"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	want := [][2]any{{"edit", false}, {"glob", true}, {"grep", true}, {"list", true}, {"read", true}, {"write", false}}
	if !slices.EqualFunc(got.Tools, want, func(a, b [2]any) bool { return a == b }) {
		t.Errorf("tools = %v, want %v", got.Tools, want)
	}
	if got.Read.IsError || len(got.Read.Content) != 1 || got.Read.Content[0].Type != "text" || !strings.Contains(got.Read.Content[0].Text, "1: alpha") {
		t.Errorf("read = %+v", got.Read)
	}
	if got.Edit.IsError {
		t.Errorf("edit after read = %+v", got.Edit)
	}
	if !got.Unread.IsError || got.Unread.StructuredContent["code"] != "FS_NOT_OBSERVED" || got.Unread.StructuredContent["name"] != "FsError" {
		t.Errorf("edit without read = %+v, want FsError FS_NOT_OBSERVED", got.Unread)
	}
	if got.Prompt == 0 {
		t.Error("the system prompt is empty")
	}
	if data, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(data) != "beta\n" {
		t.Errorf("a.txt = %q, %v", data, err)
	}
}

const nodeHTTPClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const withToken = { requestInit: { headers: { Authorization: "Bearer " + token } } };
const client = () => new Client({ name: "node-interop", version: "0" });
const failure = (e) => ({ code: e.code ?? null, message: String(e.message ?? e) });
const out = {};
try {
  await client().connect(new StreamableHTTPClientTransport(new URL(url)));
  out.noToken = "connected";
} catch (e) {
  out.noToken = failure(e);
}
const first = client();
first.onerror = () => {}; // its event stream ends with the session
await first.connect(new StreamableHTTPClientTransport(new URL(url), withToken));
out.read = await first.callTool({ name: "read", arguments: { file_path: "a.txt" } });
await new Promise((resolve) => setTimeout(resolve, 2500)); // past --session-timeout
try {
  await first.callTool({ name: "read", arguments: { file_path: "a.txt" } });
  out.expired = "answered";
} catch (e) {
  out.expired = failure(e);
}
const second = client();
await second.connect(new StreamableHTTPClientTransport(new URL(url), withToken));
out.again = await second.callTool({ name: "read", arguments: { file_path: "a.txt" } });
console.log(JSON.stringify(out));
process.exit(0);
`

// TestNodeClientHTTP: the official npm client over HTTP. Without the token
// it cannot connect (401); with it, it calls. After the session timed out,
// its next call fails with the 404 the MCP specification requires for an
// unknown session: the TypeScript SDK does not re-initialize by itself,
// and a new client connection works.
func TestNodeClientHTTP(t *testing.T) {
	node, script := nodeScript(t, nodeHTTPClient)
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url, log, _ := startHTTP(t, "--workspace", ws, "--session-timeout", "1s")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url, testToken)
	var stderr mcptest.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s\nserver:\n%s", err, stderr.String(), log.String())
	}
	type failure struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	}
	var got struct {
		NoToken, Expired failure
		Read, Again      struct{ IsError bool }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	if got.NoToken.Code == nil || *got.NoToken.Code != 401 {
		t.Errorf("without a token: %s, want code 401", out)
	}
	if got.Read.IsError || got.Again.IsError {
		t.Errorf("reads: %s", out)
	}
	if got.Expired.Code == nil || *got.Expired.Code != 404 {
		t.Errorf("a call in an expired session: %s, want code 404", out)
	}
}
