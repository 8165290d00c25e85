package fslocal

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/gordis-run/gordis/internal/confine"
	"github.com/gordis-run/gordis/plugins/fs"
)

// eolSample is how much of the text (in UTF-16 code units, as upstream
// measures it) decides the line-ending style an edit writes back.
const eolSample = 4096

// EditText applies a literal edit atomically. Under the per-target lock it
// checks, in order: the file exists (a missing file is stale, guarded or
// not), is regular, is at the guarded version; then it honours
// cancellation, reads, rejects binary (a NUL anywhere) and invalid UTF-8,
// and matches. The file keeps its BOM, its permission bits, and its
// dominant line-ending style. A file above maxHeldText, or an edit whose
// result would be, streams through the edit (see streamEdit): the outcome
// is then Omitted, without Before and After.
func (f *FS) EditText(ctx context.Context, t fs.Target, edit fs.EditRequest, intent *fs.EditIntent) (_ *fs.EditOutcome, err error) {
	if err := f.calls.enter("edit", t.Path); err != nil {
		return nil, err
	}
	defer f.calls.done("edit", t.Path, &err)
	return f.editText(ctx, t, edit, intent, defaultEdit)
}

func (f *FS) editText(ctx context.Context, t fs.Target, edit fs.EditRequest, intent *fs.EditIntent, cfg editConfig) (*fs.EditOutcome, error) {
	if err := f.locks.lock(ctx, t.Key); err != nil {
		return nil, fs.Aborted("edit", err)
	}
	defer f.locks.unlock(t.Key)

	var st confine.Stat
	if err := f.stat(t, &st); err != nil {
		if isAbsent(err) {
			return nil, stale("edit", t.Path)
		}
		return nil, osError("edit", t.Path, err)
	}
	if !confine.IsRegular(&st) {
		return nil, fs.NotRegularFile("edit", t.Path)
	}
	if intent != nil && versionOf(&st) != intent.Version {
		return nil, stale("edit", t.Path)
	}
	if err := ctx.Err(); err != nil {
		return nil, fs.Aborted("edit", err)
	}
	// The staging directory is made while the file is read and checked;
	// an edit that fails before its write removes it unused.
	staged := f.stageAsync(ctx, "edit", t)
	defer staged.discard()
	file, fst, err := f.openRegular("edit", t)
	if err != nil {
		return nil, err
	}
	if intent != nil && versionOf(fst) != intent.Version {
		// Replaced between the check above and the open (by another process:
		// our own writers wait for the lock): the guard holds for the bytes
		// actually read, not just for the name.
		file.Close()
		return nil, stale("edit", t.Path)
	}
	if fst.Size > cfg.held {
		return f.streamEdit(ctx, t, file, fst, confine.Perm(&st), edit, staged, cfg.chunk)
	}
	data, err := readAll(ctx, "edit", t.Path, file, fst.Size)
	if err != nil {
		file.Close()
		return nil, err
	}
	// The text checks and the match only read data and do not depend on
	// each other, so they run side by side (about 2 ms each for 10 MiB);
	// the failures are still reported in the contract's order.
	checked := make(chan *fs.Error, 1)
	go func() { checked <- checkText("edit", t.Path, data) }()
	prefix, text := "", data
	if bytes.HasPrefix(text, bom) {
		prefix, text = string(bom), text[len(bom):]
	}
	res := applyEdit(unsafeString(text), edit, int(cfg.held))
	if err := <-checked; err != nil {
		file.Close()
		return nil, err
	}
	if res.TooLarge {
		// A result too large to hold (a long replacement, or a replace_all
		// that lengthens its matches) is built from the file, as for a
		// large file.
		return f.streamEdit(ctx, t, file, fst, confine.Perm(&st), edit, staged, cfg.chunk)
	}
	file.Close()
	if err := matchError(t.Path, res.Replacements, edit.ReplaceAll); err != nil {
		return nil, err
	}
	s, err := staged.wait()
	if err != nil {
		return nil, err
	}
	s.read = fst
	if err := s.write(ctx, res.CRLF, append([]string{prefix}, res.After...)...); err != nil {
		return nil, err
	}
	after := res.after() // while the disk writes
	if err := s.commit(ctx, t, confine.Perm(&st)); err != nil {
		return nil, err
	}
	return &fs.EditOutcome{Before: res.Before, After: after, Replacements: res.Replacements, Version: f.postVersion(t)}, nil
}

// matchError is the failure of an edit that matched n times, if any.
func matchError(path string, n int, replaceAll bool) *fs.Error {
	switch {
	case n == 0:
		return fs.Errorf(fs.CodeEditNotFound, `old_string was not found in "%s"`, fs.Clip(path))
	case n > 1 && !replaceAll:
		return fs.Errorf(fs.CodeAmbiguousEdit,
			`old_string matched %d times in "%s"; provide a more specific old_string or set replace_all to true`,
			n, fs.Clip(path))
	}
	return nil
}

// checkText rejects data that is not text: a NUL anywhere (binary wins),
// then invalid UTF-8 (a leading BOM is valid UTF-8).
func checkText(verb, path string, data []byte) *fs.Error {
	if bytes.IndexByte(data, 0) >= 0 {
		return binaryFile(verb, path)
	}
	if !utf8.Valid(data) {
		return invalidText(verb, path)
	}
	return nil
}

// editResult is a literal edit of a text. Before is LF-normalised. After
// is the LF-normalised result as the pieces it joins, which share Before's
// memory: they are written as they are, and joined only while the disk
// writes. CRLF tells the style the result is stored in. Replacements is the
// number of non-overlapping matches; when it is 0, or above 1 without
// ReplaceAll, nothing was replaced and After is nil. TooLarge reports an
// edit whose result would be longer than the limit applyEdit was given:
// it was counted, not built, and After is nil.
type editResult struct {
	Before       string
	After        []string
	CRLF         bool
	Replacements int
	TooLarge     bool
}

func (r *editResult) after() string { return strings.Join(r.After, "") }

// applyEdit matches and replaces on CRLF-normalised text (file, old and new
// alike); the whole result is stored in the text's dominant style. It
// builds a result of at most limit bytes.
func applyEdit(text string, edit fs.EditRequest, limit int) editResult {
	res := editResult{Before: lf(text)}
	old := lf(edit.Old)
	if old == "" {
		return res
	}
	i := 0
	if edit.ReplaceAll {
		if res.Replacements = strings.Count(res.Before, old); res.Replacements == 0 {
			return res
		}
	} else {
		// One pass for the common case: the first match, then a search of
		// the rest that only a second match turns into a full count.
		if i = strings.Index(res.Before, old); i < 0 {
			return res
		}
		if res.Replacements = 1 + strings.Count(res.Before[i+len(old):], old); res.Replacements > 1 {
			return res
		}
	}
	// The size is counted before new is normalised: a replacement too
	// large to hold is not copied only to be dropped.
	replLen := len(edit.New) - strings.Count(edit.New, "\r\n")
	if len(res.Before)+res.Replacements*(replLen-len(old)) > limit {
		res.TooLarge = true
		return res
	}
	repl := lf(edit.New)
	if edit.ReplaceAll {
		res.After = []string{strings.ReplaceAll(res.Before, old, repl)}
	} else {
		res.After = []string{res.Before[:i], repl, res.Before[i+len(old):]}
	}
	res.CRLF = dominantCRLF(text)
	return res
}

// dominantCRLF reports whether CRLF outnumbers bare LF in the first 4096
// UTF-16 code units of text (a character above U+FFFF counts 2). Ties and
// texts without newlines are LF.
func dominantCRLF(text string) bool {
	end, units := 0, 0
	for end < len(text) && units < eolSample {
		if c := text[end]; c < utf8.RuneSelf {
			end, units = end+1, units+1
			continue
		}
		r, size := utf8.DecodeRuneInString(text[end:])
		u := 1
		if r > 0xFFFF {
			u = 2
		}
		if units+u > eolSample {
			break // the sample ends inside a surrogate pair: drop the half
		}
		end, units = end+size, units+u
	}
	sample := text[:end]
	crlf := strings.Count(sample, "\r\n")
	return crlf > strings.Count(sample, "\n")-crlf
}
