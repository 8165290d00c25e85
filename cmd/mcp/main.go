// Command mcp serves the gordis tools (list, read, write, edit, glob, grep)
// to any MCP client: on stdio by default, which is what Claude Desktop and
// Claude Code launch, or on the streamable HTTP transport with --http.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/internal/rootflag"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/mcpserver"
)

const usage = `usage: mcp [--workspace DIR] [--root DIR]... [--read-only-root DIR]...
           [--http ADDR [--session-timeout D]] [--unconfined] [--no-policy]

Serves the gordis filesystem tools (list, read, write, edit, glob, grep)
over the Model Context Protocol, with the system prompt as the prompt
"system". Without --http it speaks on stdin and stdout, for a client that
launches it (Claude Desktop, Claude Code); stdout carries only the protocol,
and logs go to stderr.

The tools are confined to the workspace and the directories given with
--root and --read-only-root (a relative DIR resolves against the workspace,
not the current directory): a path outside them, or a change under a
read-only root, is refused with FS_SANDBOX_DENIED. --unconfined lifts the
confinement.

Each MCP session is its own read-before-write session: a file must be read
in the session before the session may edit or overwrite it, and only while
it is unchanged. Over HTTP a session that sends no request for
--session-timeout is closed, with what it had read: a client that went away
without ending its session does not hold the server's memory forever.

Exit status: 0 when the client disconnected or the server was interrupted;
1 when the server could not start or failed; 2 on a usage error.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	workspace      string
	http           string
	sessionTimeout time.Duration
	roots          []fslocal.Root
	unconfined     bool
	noPolicy       bool
}

// run is the whole command; stdin and stdout are the stdio transport.
func run(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	var o options
	fl := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fl.SetOutput(io.Discard) // errors go to stderr and the help to stdout, below
	fl.Usage = func() {}
	fl.StringVar(&o.workspace, "workspace", "", "the `DIR` relative paths resolve against and the tools are confined to\n(default: the current directory)")
	rootflag.Declare(fl, &o.roots)
	fl.StringVar(&o.http, "http", "", "serve the streamable HTTP transport on `ADDR` (host:port) instead of stdio")
	fl.DurationVar(&o.sessionTimeout, "session-timeout", 30*time.Minute, "with --http, close a session idle for `D` (0: never)")
	fl.BoolVar(&o.unconfined, "unconfined", false, "let the tools reach paths outside the workspace and the roots")
	fl.BoolVar(&o.noPolicy, "no-policy", false, "leave out the read-before-write policy (unconditional writes and edits)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fl.SetOutput(stdout)
			fl.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "mcp: %v (see mcp --help)\n", err)
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "mcp: unexpected argument %q (see mcp --help)\n", fl.Arg(0))
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, o, logger, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "mcp:", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, o options, logger *slog.Logger, stdin io.ReadCloser, stdout io.WriteCloser) error {
	d, closeDeployment, err := gordis.Build(gordis.Options{
		Workspace:  o.workspace,
		Roots:      o.roots,
		Unconfined: o.unconfined,
		NoPolicy:   o.noPolicy,
		Logger:     logger,
	})
	if err != nil {
		return err
	}
	defer closeDeployment()
	server, err := plugServer(d)
	if err != nil {
		return err
	}
	if o.http != "" {
		return serveHTTP(ctx, o.http, o.sessionTimeout, server.MCP(), logger)
	}
	logger.Info("serving MCP on stdio", "workspace", d.Workspace)
	err = server.MCP().Run(ctx, mcpserver.NewIOTransport(stdin, stdout))
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil // interrupted, or the client went away
	}
	return err
}

// plugServer loads the server plugin on the deployment's root and returns
// the service it provides.
func plugServer(d *gordis.Deployment) (*mcpserver.Server, error) {
	f, err := d.Root.Plugin(mcpserver.Plugin, mcpserver.Config{Cwd: d.Workspace})
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		return nil, err
	}
	return mcpserver.Service.Get(f.Context())
}

// serveHTTP serves the streamable transport with sessions (each one a
// read-before-write session) until ctx is done. A session idle for
// sessionTimeout is closed: over HTTP nothing else tells a client that
// vanished from one that is thinking.
func serveHTTP(ctx context.Context, addr string, sessionTimeout time.Duration, server *mcp.Server, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Logger: logger, SessionTimeout: sessionTimeout})
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving MCP on streamable HTTP", "url", "http://"+ln.Addr().String()+"/")
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Open event streams never go idle: after a grace period, cut them.
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return srv.Close()
	}
	return nil
}
