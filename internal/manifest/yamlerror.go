package manifest

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml3 "go.yaml.in/yaml/v3"
)

// yamlError is the *SyntaxError for a YAML parser error (nil for nil)
// about doc, a document that starts after offset lines of its file. Its
// message is on one line (the parser lists several problems on separate
// lines), names a line of the file whenever the parser's message does or
// the line can be found (locateYAML), never shows a Go type (the parser's
// "invalid map key: map[interface {}]interface {}{…}" for an unfilled
// "{{ .Name }}" template), and is cut to maxErrorBytes. Its Line is the
// first line the message names, 0 if none.
func yamlError(err error, doc []byte, offset int) error {
	if err == nil {
		return nil
	}
	var parts []string
	for line := range strings.Lines(err.Error()) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	msg := strings.Join(parts, " ")
	if invalidMapKeyRE.MatchString(msg) {
		msg = "yaml: a map key must be a string, not a map or a list (an unfilled template, such as {{ .Name }}?)"
	} else if strings.Contains(msg, "interface {}") || strings.Contains(msg, "map[") {
		msg = "yaml: a value that cannot be converted to JSON"
	}
	// The parser's line numbers are the document's: make them the file's.
	msg = yamlLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(yamlLineRE.FindStringSubmatch(m)[1])
		return "line " + strconv.Itoa(n+offset)
	})
	if !yamlLineRE.MatchString(msg) {
		if n := locateYAML(doc, msg); n > 0 {
			rest, _ := strings.CutPrefix(msg, "yaml: ")
			msg = "yaml: line " + strconv.Itoa(n+offset) + ": " + rest
		}
	}
	msg = clip("invalid YAML: "+msg, maxErrorBytes)
	line := 0
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
	}
	return &SyntaxError{Format: "YAML", Line: line, Err: errors.New(msg)}
}

var (
	yamlLineRE      = regexp.MustCompile(`\bline (\d+)\b`)
	invalidMapKeyRE = regexp.MustCompile(`\binvalid map key\b`)
	unknownAnchorRE = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)
)

// locateYAML finds the line (1-based, in doc) of a YAML error whose
// message names none: an invalid UTF-8 sequence, an alias to an unknown
// anchor, or a node that parses but does not decode (a map or list as a
// map key, a scalar whose explicit tag does not fit it, such as "!!int
// x", an alias that contains itself, a bad merge). It returns 0 when it
// cannot tell.
func locateYAML(doc []byte, msg string) int {
	if !utf8.Valid(doc) {
		for i := 0; i < len(doc); {
			r, size := utf8.DecodeRune(doc[i:])
			if r == utf8.RuneError && size <= 1 {
				return bytes.Count(doc[:i], []byte{'\n'}) + 1
			}
			i += size
		}
	}
	if m := unknownAnchorRE.FindStringSubmatch(msg); m != nil {
		re := regexp.MustCompile(`\*` + regexp.QuoteMeta(m[1]) + `\b`)
		if loc := re.FindIndex(doc); loc != nil {
			return bytes.Count(doc[:loc[0]], []byte{'\n'}) + 1
		}
		return 0
	}
	var root yaml3.Node
	if err := yaml3.Unmarshal(doc, &root); err != nil {
		return 0
	}
	return failingNodeLine(&root, 0)
}

// maxLocateDepth bounds failingNodeLine's descent.
const maxLocateDepth = 64

// failingNodeLine returns the line of the innermost node under n that
// does not decode: a map's key that is not a scalar first, else the
// first child that fails, else n itself. It returns 0 when n decodes.
func failingNodeLine(n *yaml3.Node, depth int) int {
	var v any
	if n.Decode(&v) == nil {
		return 0
	}
	if n.Kind == yaml3.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml3.MappingNode || k.Kind == yaml3.SequenceNode {
				return k.Line
			}
		}
	}
	if depth < maxLocateDepth && n.Kind != yaml3.AliasNode {
		for _, c := range n.Content {
			if line := failingNodeLine(c, depth+1); line > 0 {
				return line
			}
		}
	}
	return n.Line
}
