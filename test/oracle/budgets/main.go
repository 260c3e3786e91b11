// The differential-test oracle: upstream Karpenter's own disruption budget functions
// (sigs.k8s.io/karpenter/pkg/apis/v1, with robfig/cron v3). Reads one JSON case per line on stdin and
// prints one JSON result per line: how many disruptions the NodePool allows for the reason at the
// instant, or the error upstream returns.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

type testCase struct {
	Budgets  *[]v1.Budget `json:"budgets"`
	Reason   string       `json:"reason"`
	NumNodes int          `json:"numNodes"`
	Now      time.Time    `json:"now"`
}

type result struct {
	Allowed int    `json:"allowed"`
	Error   string `json:"error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var c testCase
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintf(os.Stderr, "bad case: %v\n", err)
			os.Exit(2)
		}
		nodePool := &v1.NodePool{}
		if c.Budgets != nil {
			nodePool.Spec.Disruption.Budgets = *c.Budgets
		}
		allowed, err := nodePool.GetAllowedDisruptionsByReason(clocktesting.NewFakeClock(c.Now), c.NumNodes, v1.DisruptionReason(c.Reason))
		r := result{Allowed: allowed}
		if err != nil {
			r.Error = err.Error()
		}
		line, _ := json.Marshal(r)
		out.Write(line)
		out.WriteByte('\n')
	}
}
