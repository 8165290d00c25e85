package runtime

// ConfigChange is emitted on UpdateEvent when Fiber.Update gave a fiber a
// new config. From and To are validated configs, as Fiber.Config returns them.
type ConfigChange struct {
	Fiber *Fiber `json:"fiber"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

// UpdateEvent reports, on the root, every config a fiber took through
// Fiber.Update, whoever called it (Cordis's internal/update): a loader
// listens to write a plugin's own config changes back to its file. It is
// emitted after the change, in place or by restart, from Update's goroutine.
var UpdateEvent = NewEvent[ConfigChange]("internal/update")
