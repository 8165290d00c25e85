package toolfs

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/gordis-run/gordis/internal/schema"
)

// The sandbox escalation arguments. The schemas advertise neither:
// the local provider confines but has no sandbox to widen, so a call that
// asks for escalation anyway is refused, after its pairing is checked, and
// before anything is resolved. The errors carry no code.
var (
	errEscalationUnpaired   = errors.New("invalid escalation: sandbox_permissions requires a justification")
	errJustificationAlone   = errors.New("invalid escalation: justification is only valid together with sandbox_permissions")
	errJustificationBlank   = errors.New("invalid justification: expected a non-empty sentence")
	errEscalationNotOffered = errors.New("sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)")
)

// escalation checks a call's raw arguments for the escalation pair. A key
// given as null counts as absent.
func escalation(args json.RawMessage) error {
	members, ok := schema.Members(args)
	if !ok {
		return nil // not an object: the schema already refused it
	}
	var permissions, justification []byte
	for _, m := range members {
		switch m.Key {
		case "sandbox_permissions":
			permissions = m.Value
		case "justification":
			justification = m.Value
		}
	}
	given := func(v []byte) bool { return v != nil && string(v) != "null" }
	switch {
	case !given(permissions) && !given(justification):
		return nil
	case !given(justification):
		return errEscalationUnpaired
	case !given(permissions):
		return errJustificationAlone
	}
	var sentence string
	if json.Unmarshal(justification, &sentence) != nil || strings.TrimSpace(sentence) == "" {
		return errJustificationBlank
	}
	return errEscalationNotOffered
}
