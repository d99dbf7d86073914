package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/internal/apiclient"
)

func TestDescribePodGolden(t *testing.T) {
	_, url := fixtureAgent(t)
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"describe_crasher.txt", []string{"describe", "pod", "crasher"}},
		{"describe_web.txt", []string{"describe", "pods", "web", "-n", "default"}},
		{"describe_migrate.txt", []string{"describe", "po", "migrate"}},
		{"describe_oom.txt", []string{"describe", "pod", "oom", "-n", "kube-system"}},
	} {
		t.Run(c.golden, func(t *testing.T) {
			out, _ := runOK(t, append(c.args, "--server", url)...)
			golden(t, c.golden, out)
		})
	}
}

func TestDescribeMissingPod(t *testing.T) {
	_, url := fixtureAgent(t)
	var out, errOut bytes.Buffer
	err := runCLI(context.Background(), &out, &errOut, "describe", "pod", "nope", "--server", url)
	if !errors.Is(err, apiclient.ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("missing pod: %v", err)
	}
	err = runCLI(context.Background(), &out, &errOut, "describe", "pod", "--server", url)
	if err == nil {
		t.Error("describe pod without a name succeeded")
	}
}
