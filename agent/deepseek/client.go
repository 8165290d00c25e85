package deepseek

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/gordis-run/gordis/agent"
)

// Retry waits when Config.MaxRetryDelay is 0.
const (
	defaultMaxBackoff    = 8 * time.Second
	defaultMaxRetryAfter = 2 * time.Minute
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// statusError is a non-2xx answer, with the server's own explanation.
type statusError struct {
	Status    int
	Message   string // the body's error.message; "" when there was none
	Code      string // the body's error.code
	RequestID string
	Retries   int // how many attempts before this one failed too
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// post sends body to the chat-completions endpoint and returns a 2xx
// response, retrying connection errors, 408, 409, 429 and 5xx up to
// MaxRetries times. The caller closes the body.
func (m *Model) post(ctx context.Context, body chatRequest) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		// Only a tool's parameters, raw JSON from a plugin, can fail here.
		return nil, &agent.ModelError{Code: agent.CodeInvalidRequest, Message: "the request cannot be encoded: " + err.Error(), Err: err}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := m.cfg.HTTPClient.Do(req)
		if ctx.Err() != nil {
			if err == nil {
				res.Body.Close()
			}
			return nil, ctx.Err()
		}
		if err == nil && res.StatusCode < 300 {
			return res, nil
		}
		var failure error = err
		if err == nil {
			se := readStatusError(res)
			se.Retries = attempt
			failure = se
		}
		delay, retry := m.retryDelay(res, attempt)
		if !retry || attempt >= m.cfg.MaxRetries {
			return nil, failure
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// retryDelay says whether the failed attempt (res nil for a connection
// error) may be retried, and after how long: the wait the server asked for
// when it is no longer than the cap, else an exponential backoff from half
// a second, capped, less up to a quarter of jitter.
func (m *Model) retryDelay(res *http.Response, attempt int) (time.Duration, bool) {
	if res != nil {
		switch s := res.StatusCode; {
		case s == http.StatusRequestTimeout, s == http.StatusConflict, s == http.StatusTooManyRequests, s >= 500:
		default:
			return 0, false
		}
		if d, ok := retryAfter(res.Header); ok {
			return d, d <= cmp.Or(m.cfg.MaxRetryDelay, defaultMaxRetryAfter)
		}
	}
	limit := cmp.Or(m.cfg.MaxRetryDelay, defaultMaxBackoff)
	delay := limit
	if attempt < 30 {
		delay = min(limit, (time.Second/2)<<attempt)
	}
	if j := int64(delay / 4); j > 0 {
		delay -= time.Duration(rand.Int64N(j))
	}
	return delay, true
}

// retryAfter reads the wait the server asks for: Retry-After-Ms in
// milliseconds, else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	if d, ok := parseWait(h.Get("Retry-After-Ms"), time.Millisecond); ok {
		return d, true
	}
	v := h.Get("Retry-After")
	if d, ok := parseWait(v, time.Second); ok {
		return d, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(0, time.Until(t)), true
}

// parseWait reads a non-negative number of units; a wait too long for a
// Duration saturates.
func parseWait(v string, unit time.Duration) (time.Duration, bool) {
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsNaN(n) {
		return 0, false
	}
	if n >= float64(math.MaxInt64)/float64(unit) {
		return math.MaxInt64, true
	}
	return time.Duration(n * float64(unit)), true
}

// readStatusError reads and closes a failed response.
func readStatusError(res *http.Response) *statusError {
	defer res.Body.Close()
	e := &statusError{Status: res.StatusCode, RequestID: cmp.Or(res.Header.Get("x-request-id"), res.Header.Get("x-deepseek-request-id"))}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	var wrapped struct {
		Error *errorDetail `json:"error"`
	}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Error != nil {
		e.Message, e.Code = wrapped.Error.Message, wrapped.Error.code()
	}
	return e
}
