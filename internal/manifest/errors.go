package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Every error of this package is about one manifest and says where in it
// the problem is, as precisely as the problem allows:
//
//   - a problem with a field names the field by its path, e.g.
//     "spec.containers[0].resources.limits[cpu]": a validation error
//     (*field.Error), an unknown or duplicated field (`unknown field
//     "spec.containers[0].imagee"`), or a value of the wrong type or
//     format (*ValueError);
//   - a manifest that is not well-formed YAML or JSON has no fields to
//     name: its *SyntaxError names the line (and for JSON the column)
//     where the parser stopped, when the parser says (YAML's reader-level
//     errors, such as invalid UTF-8, name none);
//   - a manifest that is not one object at all is ErrEmpty, ErrTooLarge
//     or ErrNotOneObject.
//
// Decode and LoadFile wrap each in a *FileError naming the file.

// ErrEmpty is returned (wrapped in a *FileError) by Decode and LoadFile when
// a manifest holds no document: it is empty, blank, or only comments.
var ErrEmpty = errors.New("empty manifest: want one Pod")

// ErrTooLarge is returned (wrapped) for a manifest over MaxManifestBytes.
var ErrTooLarge = errors.New("manifest too large")

// ErrNotOneObject is returned (wrapped) for a manifest that is not one
// object: a YAML stream of several documents, or a document that is a
// list, a string or a number.
var ErrNotOneObject = errors.New("not one object")

// FileError is an error about one manifest file. Its message is
// "manifest <path>: <cause>", e.g.
//
//	manifest /etc/actorlet/manifests/web.yaml: spec.containers[0].image: Required value
//
// Decode and LoadFile return every error as a *FileError; use errors.As to
// get the path and errors.Is / errors.As on the cause.
type FileError struct {
	Path string // as given to Decode; absolute when it comes from LoadFile
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("manifest %s: %v", e.Path, e.Err) }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// ValueError is a value that does not decode into its field's type: a
// string where a number belongs, an integer out of range, a malformed
// quantity ("cpu: 1x") or time. Its message is
//
//	<field>: Invalid value: <value>: want <what>[: <cause>]
//
// e.g. `spec.containers[0].resources.limits[cpu]: Invalid value: "1x":
// want a quantity (e.g. 500m, 64Mi): quantities must match the regular
// expression ...`.
type ValueError struct {
	// Field is the value's path, as field.Path renders it.
	Field string
	// Value is the value as written, in JSON (strings quoted), shortened
	// when long.
	Value string
	// Want describes what the field takes: "an integer (int32)", "a
	// quantity (e.g. 500m, 64Mi)".
	Want string
	// Err is the decoder's error: from the type's own parser (e.g.
	// resource.ErrFormatWrong, *time.ParseError) or a JSON type mismatch.
	Err error
	// custom: Err comes from the type's own parser, so its message says
	// more than Want.
	custom bool
}

func (e *ValueError) Error() string {
	s := fmt.Sprintf("%s: Invalid value: %s: want %s", e.Field, e.Value, e.Want)
	if e.custom && e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return clip(s, maxErrorBytes) // a time's parser quotes the whole value
}

// Unwrap returns the decoder's error.
func (e *ValueError) Unwrap() error { return e.Err }

// SyntaxError is a manifest that is not well-formed YAML or JSON. No field
// can be named: it names the line (and, for JSON, the column) where the
// parser stopped.
type SyntaxError struct {
	Format string // "YAML" or "JSON"
	// Line and Column are 1-based; 0 when the parser does not say (YAML's
	// parser puts the line in its message, Err, and names no column).
	Line, Column int
	Err          error // the parser's error
}

func (e *SyntaxError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%v at line %d, column %d", e.Err, e.Line, e.Column)
	}
	return e.Err.Error()
}

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// kindError is an error with its own message that errors.Is one of the
// sentinels above.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// Bounds on an error message, so that one bad manifest cannot make a log
// line of megabytes: an aggregate shows its first maxShownErrors errors,
// and each error, value and YAML message is cut at maxErrorBytes.
const (
	maxShownErrors = 50
	maxErrorBytes  = 1 << 10
	maxValueBytes  = 64
)

// errorList is the aggregate of errors returned by Validate and Decode, a
// utilerrors.Aggregate. Its message lists the errors as utilerrors' does,
// "[a, b]" (or just "a"), but is built in time linear in their number
// (utilerrors' concatenates one by one: quadratic, seconds for tens of
// thousands of errors) and shows at most maxShownErrors of them, each cut
// at maxErrorBytes, then how many more there are.
type errorList []error

var _ utilerrors.Aggregate = errorList(nil)

// aggregate returns errs, without repeated messages, as an errorList; nil
// when there are none.
func aggregate(errs []error) error {
	seen := make(map[string]bool, len(errs))
	out := make(errorList, 0, len(errs))
	for _, e := range errs {
		if e == nil {
			continue
		}
		msg := e.Error()
		if seen[msg] {
			continue
		}
		seen[msg] = true
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// aggregateFields is aggregate for a field.ErrorList.
func aggregateFields(list field.ErrorList) error {
	errs := make([]error, len(list))
	for i, e := range list {
		errs[i] = e
	}
	return aggregate(errs)
}

func (l errorList) Error() string {
	if len(l) == 1 {
		return clip(l[0].Error(), maxErrorBytes)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, e := range l {
		if i == maxShownErrors {
			fmt.Fprintf(&b, ", and %d more errors", len(l)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(clip(e.Error(), maxErrorBytes))
	}
	b.WriteByte(']')
	return b.String()
}

// Errors returns every error, shown or not.
func (l errorList) Errors() []error { return l }

// Is reports whether any of the errors is target.
func (l errorList) Is(target error) bool {
	for _, e := range l {
		if errors.Is(e, target) {
			return true
		}
	}
	return false
}

// Unwrap returns every error, for errors.As.
func (l errorList) Unwrap() []error { return l }

// clip cuts s to at most max bytes (on a rune boundary), saying how long
// it was.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "... (" + strconv.Itoa(len(s)) + " bytes)"
}
