// Command soak churns pods on real Docker for a while, with random kills
// of containers and of actorlet itself, checking actorlet's invariants
// throughout, and prints what it checked and found. It is `make soak`; it
// is not part of `make test`.
//
//	go run ./hack/soak -duration 5m -agent bin/actorlet
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/docker"
)

type counts map[string]int

func main() {
	duration := flag.Duration("duration", 5*time.Minute, "how long to churn")
	agent := flag.String("agent", "bin/actorlet", "the actorlet binary (make build)")
	image := flag.String("image", "actorlet/testworkload:0.1.0", "workload image (make images)")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to replay)")
	flag.Parse()
	if err := run(*duration, *agent, *image, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

func run(duration time.Duration, agentBin, image string, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	node := fmt.Sprintf("soak-%d", seed%100000)
	work, err := os.MkdirTemp("", "actorlet-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	manifests := filepath.Join(work, "manifests")
	if err := os.MkdirAll(manifests, 0o755); err != nil {
		return err
	}
	rt, err := docker.New()
	if err != nil {
		return err
	}
	defer rt.Close()
	ctx := context.Background()
	defer cleanup(rt, node)
	fmt.Printf("soak: node %s, seed %d, %s, agent %s\n", node, seed, duration, agentBin)

	// A bystander without labels: it must never be touched.
	bystander := fmt.Sprintf("soak-bystander-%d", seed%100000)
	if out, err := exec.Command("docker", "run", "-d", "--name", bystander, image).CombinedOutput(); err != nil {
		return fmt.Errorf("start bystander: %v: %s", err, out)
	}
	defer exec.Command("docker", "rm", "-f", bystander).Run()
	bystanderStart := startedAt(bystander)

	start := func() *exec.Cmd {
		cmd := exec.Command(agentBin, "run", "--manifests", manifests, "--node-name", node, "--root-dir", filepath.Join(work, "root"),
			"--port", "0", "--backoff-initial", "1s", "--backoff-max", "4s", "--log-format", "json")
		log, _ := os.OpenFile(filepath.Join(work, "agent.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "soak: start agent:", err)
		}
		return cmd
	}
	agent := start()
	defer func() { _ = agent.Process.Kill(); _, _ = agent.Process.Wait() }()

	did, found := counts{}, counts{}
	pods := map[string]bool{}
	deadline := time.Now().Add(duration)
	checks := 0
	for time.Now().Before(deadline) {
		switch a := rng.IntN(10); {
		case a < 3: // add or edit a pod
			name := fmt.Sprintf("p%d", rng.IntN(6))
			policy := []string{"Always", "OnFailure", "Never"}[rng.IntN(3)]
			exitAfter := []string{"", "2s", "5s"}[rng.IntN(3)]
			writeManifest(manifests, name, image, policy, exitAfter, rng.IntN(2)+1)
			pods[name] = true
			did["write manifest"]++
		case a < 5: // delete a pod
			for name := range pods {
				_ = os.Remove(filepath.Join(manifests, name+".yaml"))
				delete(pods, name)
				did["delete manifest"]++
				break
			}
		case a < 8: // kill a managed container from outside
			if res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node}); err == nil && len(res.Containers) > 0 {
				c := res.Containers[rng.IntN(len(res.Containers))]
				_ = exec.Command("docker", "kill", c.ID).Run()
				did["docker kill"]++
			}
		default: // SIGKILL actorlet and start it again
			_ = agent.Process.Signal(syscall.SIGKILL)
			_, _ = agent.Process.Wait()
			agent = start()
			did["SIGKILL agent"]++
		}
		for i := 0; i < 4; i++ { // check often between actions
			time.Sleep(500 * time.Millisecond)
			checks++
			if msg := invariant1(ctx, rt, node); msg != "" {
				found[msg]++
			}
			if startedAt(bystander) != bystanderStart {
				found["invariant 3: the unlabelled bystander was touched"]++
			}
		}
	}
	fmt.Println("soak: churn over; waiting up to 2 min for convergence")
	converged := false
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
		if msg := convergence(ctx, rt, node, pods); msg == "" {
			converged = true
			break
		}
	}
	if !converged {
		found["not converged: "+convergence(ctx, rt, node, pods)]++
	}
	fmt.Println("\nactions          count")
	printCounts(did)
	fmt.Printf("\nchecks: %d invariant checks (at most one running container per pod and name; bystander untouched), then convergence\n", checks)
	if len(found) == 0 {
		fmt.Println("found: nothing wrong")
		return nil
	}
	fmt.Println("found:")
	printCounts(found)
	return fmt.Errorf("%d problems (agent log: %s)", len(found), filepath.Join(work, "agent.log"))
}

func writeManifest(dir, name, image, policy, exitAfter string, containers int) {
	y := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  restartPolicy: %s\n  terminationGracePeriodSeconds: 2\n  containers:\n", name, policy)
	for i := 0; i < containers; i++ {
		y += fmt.Sprintf("  - name: c%d\n    image: %s\n", i, image)
		if exitAfter != "" {
			y += fmt.Sprintf("    env: [{name: TW_EXIT_AFTER, value: %q}, {name: TW_EXIT_CODE, value: \"1\"}]\n", exitAfter)
		}
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	_ = os.WriteFile(tmp, []byte(y), 0o644)
	_ = os.Rename(tmp, filepath.Join(dir, name+".yaml"))
}

// invariant1: at most one running container per (pod UID, container name).
func invariant1(ctx context.Context, rt *docker.Runtime, node string) string {
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node})
	if err != nil {
		return ""
	}
	seen := map[string]int{}
	for _, c := range res.Containers {
		k := c.Labels[runtimeadapter.LabelPodUID] + "/" + c.Labels[runtimeadapter.LabelContainerName]
		if seen[k]++; seen[k] > 1 {
			return "invariant 1: two running containers for " + k
		}
	}
	return ""
}

// convergence: every desired pod has a running sandbox, and no container
// of a deleted pod is left.
func convergence(ctx context.Context, rt *docker.Runtime, node string, pods map[string]bool) string {
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil {
		return err.Error()
	}
	have := map[string]bool{}
	for _, c := range res.Containers {
		name := c.Labels[runtimeadapter.LabelPodName]
		if !pods[name] {
			return "a container of deleted pod " + name + " is left"
		}
		if c.Labels[runtimeadapter.LabelContainerType] == "sandbox" && c.State == runtimeadapter.StateRunning {
			have[name] = true
		}
	}
	for name := range pods {
		if !have[name] && !finished(res.Containers, name) {
			return "pod " + name + " has no running sandbox"
		}
	}
	return ""
}

// finished: a pod whose restartPolicy let it complete has no sandbox.
func finished(cs []runtimeadapter.Container, pod string) bool {
	for _, c := range cs {
		if c.Labels[runtimeadapter.LabelPodName] == pod && c.Labels[runtimeadapter.LabelContainerType] == "app" && c.State == runtimeadapter.StateExited {
			return true
		}
	}
	return false
}

func startedAt(name string) string {
	out, _ := exec.Command("docker", "inspect", "-f", "{{.State.StartedAt}}", name).Output()
	return string(out)
}

func printCounts(c counts) {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-40s %d\n", k, c[k])
	}
}

func cleanup(rt *docker.Runtime, node string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := rt.List(ctx, runtimeadapter.ListOptions{Node: node, All: true})
	if err != nil {
		return
	}
	for _, c := range res.Containers {
		_ = rt.Remove(ctx, c.ID)
	}
}
