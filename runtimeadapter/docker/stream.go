package docker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// streamMessage is the part of a Docker JSON progress message (pull, build)
// that reports failure.
type streamMessage struct {
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// drainStream reads a JSON message stream to its end and returns the first
// error it reports, or the read error if the stream breaks.
func drainStream(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m streamMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read progress stream: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
	}
}
