package manifest

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/yaml"
)

// yamlDoc is one document of a YAML stream with content (see hasContent).
type yamlDoc struct {
	// data is the document: from the separator ("---") that opened it,
	// and any directive ("%YAML 1.2") before that, for the parser to
	// judge, to its end.
	data []byte
	// offset is the number of lines of the stream before data: the
	// parser's line n is the stream's line offset+n.
	offset int
	// line is the stream's line (1-based) where the content starts.
	line int
	// err is a *SyntaxError when the document cannot be given to the
	// parser: its separator line holds more than a comment.
	err error
}

// toJSON converts the document to JSON. YAMLToJSONStrict rejects
// duplicate keys. Its errors are *SyntaxError naming a line of the stream.
func (d yamlDoc) toJSON() ([]byte, error) {
	jsonData, err := yaml.YAMLToJSONStrict(d.data)
	if err != nil {
		return nil, yamlError(err, d.data, d.offset)
	}
	return jsonData, nil
}

// splitYAML splits a YAML stream into its documents with content, as
// kubectl does, before any parsing: a line starting with "---" (followed
// by nothing but a comment) separates them, and so does a document end
// marker ("..."), after which YAML starts a new document too. A "---"
// followed by content ("--- {}", legal YAML that kubectl's reader does not
// split either) gives its document an error, not the stream: the lines
// still say where every document starts and ends. The YAML grammar agrees
// with this split: a line starting with "---" or "..." and a blank ends
// even a quoted or block scalar at the top level, so no error in one
// document can move the boundaries of the others.
func splitYAML(data []byte) []yamlDoc {
	// A document's lines, by byte offsets, the offset of the "---" line
	// that opened it (-1: the stream's start or a "..."), the line where
	// its content starts (0: none yet).
	type span struct {
		start, sep, line int
		err              error
	}
	var (
		docs        []yamlDoc
		cur         = span{sep: -1}
		off, lineNo int
	)
	closeDoc := func(end int) {
		if cur.line == 0 {
			return
		}
		from := cur.start
		if cur.sep >= 0 {
			from = cur.sep
			// Directives belong to the document after the separator.
			for from > 0 {
				prev := bytes.LastIndexByte(data[:from-1], '\n') + 1
				if data[prev] != '%' {
					break
				}
				from = prev
			}
		}
		docs = append(docs, yamlDoc{
			data:   data[from:end:end],
			offset: bytes.Count(data[:from], []byte{'\n'}),
			line:   cur.line,
			err:    cur.err,
		})
	}
	for line := range bytes.Lines(data) {
		lineNo++
		start := off
		off += len(line)
		switch {
		case bytes.HasPrefix(line, []byte("---")):
			closeDoc(start)
			cur = span{start: off, sep: start}
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				cur.line = lineNo
				cur.err = &SyntaxError{Format: "YAML", Line: lineNo, Err: fmt.Errorf(
					"invalid YAML: line %d: only a comment may follow a document separator (---), not %q", lineNo, clip(string(rest), 40))}
			}
		case isDocumentEnd(line):
			closeDoc(start)
			cur = span{start: off, sep: -1}
		case cur.line == 0 && hasContent(line):
			cur.line = lineNo
		}
	}
	closeDoc(off)
	return docs
}

// isDocumentEnd reports whether line is a document end marker: "..."
// followed by the line's end or a blank, then nothing but a comment
// ("...#" and "...:" are plain scalars).
func isDocumentEnd(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("..."))
	if !ok {
		return false
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' && rest[0] != '\n' {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// hasContent reports whether a line of a YAML document is neither blank,
// a comment, nor a directive ("%YAML 1.2", which belongs to the document
// after the next "---").
func hasContent(line []byte) bool {
	if len(line) > 0 && line[0] == '%' {
		return false
	}
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] != '#'
}
