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

// TestNodeClient drives the command with the official npm client, installed
// into a temporary directory. It is skipped under -short, without node and
// npm, or when the registry cannot be reached.
func TestNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package")
	}
	node, errNode := exec.LookPath("node")
	npm, errNPM := exec.LookPath("npm")
	if errNode != nil || errNPM != nil {
		t.Skip("node and npm are needed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, nodeSDK)
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("npm install %s failed (no registry?): %v\n%s", nodeSDK, err, out)
	}
	script := filepath.Join(dir, "client.mjs")
	if err := os.WriteFile(script, []byte(nodeClient), 0o644); err != nil {
		t.Fatal(err)
	}
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
