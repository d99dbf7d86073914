// Package sourcetest holds the checks the sources' tests share about the
// ConfigMaps and Secrets a source sends.
package sourcetest

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest/observer"

	"github.com/actorlet/actorlet/sources"
)

// ObjectNames returns "Kind namespace/name=value" for each ConfigMap (its
// key app.conf) and Secret (its key password) of u, joined by ",".
func ObjectNames(u sources.Update) string {
	var out []string
	for _, cm := range u.ConfigMaps {
		out = append(out, "ConfigMap "+cm.Namespace+"/"+cm.Name+"="+cm.Data["app.conf"])
	}
	for _, s := range u.Secrets {
		out = append(out, "Secret "+s.Namespace+"/"+s.Name+"="+string(s.Data["password"]))
	}
	return strings.Join(out, ",")
}

// NoSecretShown fails t if a log entry (message or field) or a problem
// contains value, a Secret's.
func NoSecretShown(t *testing.T, logs *observer.ObservedLogs, problems []error, value string) {
	t.Helper()
	for _, e := range logs.All() {
		if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, value) {
			t.Errorf("a log shows a Secret's value: %s", line)
		}
	}
	for _, p := range problems {
		if strings.Contains(p.Error(), value) {
			t.Errorf("a problem shows a Secret's value: %v", p)
		}
	}
}
