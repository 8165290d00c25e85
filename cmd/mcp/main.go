// Command mcp serves the gordis tools (list, read, write, edit, glob, grep)
// to any MCP client: on stdio by default, which is what Claude Desktop and
// Claude Code launch, or on the streamable HTTP transport with --http.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gordis-run/gordis"
	"github.com/gordis-run/gordis/internal/rootflag"
	"github.com/gordis-run/gordis/loader"
	"github.com/gordis-run/gordis/plugins/fslocal"
	"github.com/gordis-run/gordis/plugins/mcpclient"
	"github.com/gordis-run/gordis/plugins/mcpserver"
	"github.com/gordis-run/gordis/plugins/metrics"
	"github.com/gordis-run/gordis/runtime"
)

const usage = `usage: mcp [--config FILE] [--workspace DIR] [--root DIR]... [--read-only-root DIR]...
           [--unconfined] [--no-policy] [--max-message SIZE]
           [--log-format text|json] [--log-level debug|info|warn|error]
           [--http ADDR [--token-file FILE | --no-auth] [--tls-cert FILE --tls-key FILE]
                        [--session-timeout D] [--max-sessions N] [--max-calls N] [--rate N]
                        [--metrics ADDR] [--drain-timeout D]]

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

--config FILE builds the deployment from a file of plugin entries
(gordis.yaml at the repository root is the default one; see docs/loader.md),
with mcpclient and metrics in its catalogue besides the standard plugins
(--metrics serves the file's metrics entry when it has one). --workspace,
--root, --read-only-root and --unconfined win over its fslocal entries;
--no-policy is refused with it (disable the fspolicy entry instead). The
server applies every save of the file, and SIGHUP reloads it, without a
restart: only the entries that changed are touched, and a file that does
not load is logged and changes nothing.

Each MCP session is its own read-before-write session: a file must be read
in the session before the session may edit or overwrite it, and only while
it is unchanged. Over HTTP a session that sends no request for
--session-timeout is closed, with what it had read: a client that went away
without ending its session does not hold the server's memory forever.

With --http the endpoint is /mcp, and it wants a bearer token
("Authorization: Bearer TOKEN"): the tokens of --token-file (one a line),
else $GORDIS_MCP_TOKEN, else one generated on first use and kept in
gordis/mcp-token under $XDG_STATE_HOME or the user's configuration
directory; the log names the file, never the token. A bare PORT or :PORT
listens on loopback only; other machines reach the server only on an
address given explicitly (0.0.0.0:PORT for every interface). --no-auth is
accepted on a loopback address only. GET /healthz and GET /readyz answer
without a token. --metrics serves Prometheus metrics on a listener of its
own, without a token, at /metrics.

A message larger than --max-message (SIZE in bytes, or with a KiB, MiB or
GiB suffix) is refused, with a JSON-RPC error on stdio and 413 over HTTP,
and the server goes on serving.

Over HTTP, SIGTERM or SIGINT drains the server: at once /readyz answers
503, a new session is refused with 503 and a new request of an open session
with 404 (on which clients start a new session, on another replica); the
calls in flight are answered, for up to --drain-timeout, then the server
exits. A second signal cuts the drain short.

Exit status: 0 when the client disconnected or the server was interrupted;
1 when the server could not start or failed; 2 on a usage error.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	config     string
	workspace  string
	roots      []fslocal.Root
	unconfined bool
	noPolicy   bool
	maxMessage byteSize
	logFormat  string
	logLevel   slog.Level

	http           string
	tokenFile      string
	noAuth         bool
	tlsCert        string
	tlsKey         string
	sessionTimeout time.Duration
	maxSessions    int
	maxCalls       int
	rate           float64
	metrics        string
	drainTimeout   time.Duration
}

// run is the whole command; stdin and stdout are the stdio transport.
func run(args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	o := options{maxMessage: mcpserver.DefaultMaxMessage}
	fl := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fl.SetOutput(io.Discard) // errors go to stderr and the help to stdout, below
	fl.Usage = func() {}
	fl.StringVar(&o.config, "config", "", "build the deployment from the plugin entries in `FILE` (see gordis.yaml), and\nfollow its changes")
	fl.StringVar(&o.workspace, "workspace", "", "the `DIR` relative paths resolve against and the tools are confined to\n(default: the current directory)")
	rootflag.Declare(fl, &o.roots)
	fl.BoolVar(&o.unconfined, "unconfined", false, "let the tools reach paths outside the workspace and the roots")
	fl.BoolVar(&o.noPolicy, "no-policy", false, "leave out the read-before-write policy (unconditional writes and edits)")
	fl.Var(&o.maxMessage, "max-message", "refuse a message larger than `SIZE` (the default fits a 64 MiB write)")
	fl.StringVar(&o.logFormat, "log-format", "text", "the log's format on stderr: text or json")
	fl.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log from `LEVEL` up: debug (a line per call), info, warn or error")
	fl.StringVar(&o.http, "http", "", "serve the streamable HTTP transport on `ADDR` (PORT, :PORT or HOST:PORT) instead of stdio")
	fl.StringVar(&o.tokenFile, "token-file", "", "with --http, accept the bearer tokens in `FILE` (one a line)")
	fl.BoolVar(&o.noAuth, "no-auth", false, "with --http on a loopback address, accept requests without a token")
	fl.StringVar(&o.tlsCert, "tls-cert", "", "with --http, serve HTTPS with the certificate in `FILE` (PEM; needs --tls-key)")
	fl.StringVar(&o.tlsKey, "tls-key", "", "with --http, the private key of --tls-cert in `FILE` (PEM)")
	fl.DurationVar(&o.sessionTimeout, "session-timeout", 30*time.Minute, "with --http, close a session idle for `D` (0: never)")
	fl.IntVar(&o.maxSessions, "max-sessions", 1000, "with --http, refuse a new session beyond `N` open ones with 503 (0: no bound)")
	fl.IntVar(&o.maxCalls, "max-calls", 16, "refuse a call beyond `N` in flight in its session (0: no bound)")
	fl.Float64Var(&o.rate, "rate", 100, "refuse calls beyond `N` per second per bearer token (0: no bound)")
	fl.DurationVar(&o.drainTimeout, "drain-timeout", 25*time.Second, "with --http, on SIGTERM wait up to `D` for the calls in flight (fits Kubernetes' 30 s grace)")
	fl.StringVar(&o.metrics, "metrics", "", "with --http, serve Prometheus metrics at /metrics on `ADDR` (PORT, :PORT or HOST:PORT; no token)")
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
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "mcp: %v (see mcp --help)\n", err)
		return 2
	}
	logger := newLogger(o.logFormat, o.logLevel, stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, o, logger, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "mcp:", err)
		return 1
	}
	return 0
}

// check refuses what the flags cannot mean together, before anything starts.
func (o *options) check() error {
	if o.logFormat != "text" && o.logFormat != "json" {
		return fmt.Errorf("--log-format %q: want text or json", o.logFormat)
	}
	if o.config != "" && o.noPolicy {
		return errors.New("--no-policy and --config exclude each other: set disabled: true on the file's fspolicy entry")
	}
	if o.http == "" {
		if o.tokenFile != "" || o.noAuth || o.tlsCert != "" || o.tlsKey != "" || o.metrics != "" {
			return errors.New("--token-file, --no-auth, --tls-cert, --tls-key and --metrics need --http")
		}
		return nil
	}
	addr, err := listenAddr("--http", o.http)
	if err != nil {
		return err
	}
	o.http = addr
	if o.metrics != "" {
		if o.metrics, err = listenAddr("--metrics", o.metrics); err != nil {
			return err
		}
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if o.noAuth && o.tokenFile != "" {
		return errors.New("--no-auth and --token-file exclude each other")
	}
	if host, _, _ := net.SplitHostPort(addr); o.noAuth && !loopback(host) {
		return fmt.Errorf("--no-auth is refused on %s: anyone who can reach it could use the tools; listen on a loopback address (127.0.0.1:PORT) or use a token", addr)
	}
	return nil
}

// listenAddr is the address the flag named name asks to listen on: a bare
// PORT or :PORT means loopback, so that every interface is only ever asked
// for explicitly.
func listenAddr(name, value string) (string, error) {
	port := value
	host, p, err := net.SplitHostPort(value)
	if err == nil {
		port = p
	} else if host = ""; strings.ContainsAny(value, ":[]") {
		return "", fmt.Errorf("%s %q: want PORT, :PORT or HOST:PORT", name, value)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("%s %q: want PORT, :PORT or HOST:PORT", name, value)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// pasteURL is the URL of path on addr as a client pastes it: on every
// interface (0.0.0.0, ::), under this machine's name, which other machines
// can use, rather than an address that only means "any".
func pasteURL(scheme string, addr net.Addr, path string, hostname func() (string, error)) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if name, err := hostname(); err == nil && name != "" {
			host = name
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port) + path
}

// loopback reports whether host only ever means this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func newLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func serve(ctx context.Context, o options, logger *slog.Logger, stdin io.ReadCloser, stdout io.WriteCloser) error {
	opts := gordis.Options{
		Workspace:  o.workspace,
		Roots:      o.roots,
		Unconfined: o.unconfined,
		NoPolicy:   o.noPolicy,
		Logger:     logger,
		Config:     o.config,
	}
	if o.config != "" {
		opts.Catalog = gordis.Catalog()
		if err := errors.Join(opts.Catalog.Register(mcpclient.Plugin), opts.Catalog.Register(metrics.Plugin)); err != nil {
			return err
		}
	}
	d, closeDeployment, err := gordis.Build(opts)
	if err != nil {
		return err
	}
	defer closeDeployment()
	// The metrics plugin comes first, to count the server's sessions and
	// calls from the start; --metrics serves the file's when it has one.
	stats, counting := metrics.Service.Lookup(d.Root)
	if o.metrics != "" && !counting {
		if _, stats, err = plug(d, metrics.Plugin, nil, metrics.Service); err != nil {
			return err
		}
	}
	f, server, err := plug(d, mcpserver.Plugin, mcpserver.Config{Cwd: d.Workspace, MaxCallsPerSession: o.maxCalls, CallsPerSecond: o.rate}, mcpserver.Service)
	if err != nil {
		return err
	}
	if d.Loader != nil {
		ctx, stop := context.WithCancel(ctx)
		defer stop()
		if err := follow(ctx, d.Loader, o.config, logger); err != nil {
			return err
		}
	}
	if o.http != "" {
		return serveHTTP(ctx, o, server, stats, func() bool { return f.State() == runtime.Active }, logger)
	}
	logger.Info("serving MCP on stdio", "workspace", d.Workspace, "max_message", int64(o.maxMessage))
	err = server.MCP().Run(ctx, server.IOTransport(stdin, stdout, int64(o.maxMessage)))
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		return nil // interrupted, or the client went away
	}
	return err
}

// follow reloads the deployment file on every save and on SIGHUP, until
// ctx ends. A file that does not load is logged, and changes nothing.
func follow(ctx context.Context, l *loader.Loader, file string, logger *slog.Logger) error {
	if err := l.Watch(ctx); err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				var unapplied loader.Errors
				if err := l.Reload(); errors.As(err, &unapplied) || errors.Is(err, iofs.ErrNotExist) {
					logger.Error("config reload on SIGHUP failed; the running plugins are unchanged", "file", file, "err", err)
				} else if err != nil {
					logger.Error("config reloaded on SIGHUP, but entries failed to apply", "file", file, "err", err)
				} else {
					logger.Info("config reloaded on SIGHUP", "file", file)
				}
			}
		}
	}()
	return nil
}

// plug loads p on the deployment's root and returns the service it
// provides.
func plug[T any](d *gordis.Deployment, p runtime.Plugin, cfg any, service runtime.Service[T]) (*runtime.Fiber, T, error) {
	var zero T
	f, err := d.Root.Plugin(p, cfg)
	if err == nil {
		err = f.Wait()
	}
	if err != nil {
		return nil, zero, err
	}
	s, err := service.Get(f.Context())
	return f, s, err
}

// serveHTTP serves the streamable transport on /mcp until ctx is done. The
// start line gives the URL to paste and where the token is, never the token.
// With --metrics, stats are served on a listener of their own.
func serveHTTP(ctx context.Context, o options, server *mcpserver.Server, stats *metrics.Metrics, ready func() bool, logger *slog.Logger) error {
	opts := mcpserver.HTTPOptions{
		SessionTimeout: o.sessionTimeout,
		MaxMessage:     int64(o.maxMessage),
		MaxSessions:    o.maxSessions,
		Ready:          ready,
	}
	auth := "none"
	if !o.noAuth {
		var err error
		if opts.Tokens, auth, err = tokens(o.tokenFile); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: server.HTTPHandler(opts), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	scheme := "http"
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		scheme = "https"
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return err
	}
	logger.Info("serving MCP on streamable HTTP", "url", pasteURL(scheme, ln.Addr(), mcpserver.Endpoint, os.Hostname),
		"token", auth, "max_message", int64(o.maxMessage), "max_sessions", o.maxSessions, "max_calls", o.maxCalls, "rate", o.rate)
	if o.metrics != "" {
		stop, err := serveMetrics(o.metrics, stats, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
	}
	served := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return drain(o.drainTimeout, srv, server, logger)
}

// drain answers the calls in flight for up to timeout, or until a second
// SIGTERM or SIGINT, then stops srv. Either way the exit is clean: a cut
// call's file is whole, as a write or an edit replaces a file at once.
func drain(timeout time.Duration, srv *http.Server, server *mcpserver.Server, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logger.Info("draining: new sessions refused, answering the calls in flight", "timeout", timeout)
	start := time.Now()
	if err := server.Drain(ctx); err != nil {
		logger.Warn("drain cut short", "err", err)
		return srv.Close()
	}
	logger.Info("drained", "duration", time.Since(start).Round(time.Millisecond))
	// The event streams never end by themselves: a moment for the last
	// answers to reach their clients, then cut them.
	shutdown, cancelShutdown := context.WithTimeout(context.Background(), time.Second)
	defer cancelShutdown()
	if err := srv.Shutdown(shutdown); err != nil {
		return srv.Close()
	}
	return nil
}

// serveMetrics serves the metrics at /metrics on addr until stop.
func serveMetrics(addr string, stats *metrics.Metrics, logger *slog.Logger) (stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", stats)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	logger.Info("serving metrics", "metrics", pasteURL("http", ln.Addr(), "/metrics", os.Hostname))
	return srv.Close, nil
}
