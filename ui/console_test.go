package ui_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/clustertest"
	"github.com/minkhq/mink/internal/testkit"
)

// EnvChromium, set to 1 (as `make test` does after scripts/ensure-chromium),
// makes the Chromium test fail rather than skip when Chromium is missing.
const EnvChromium = "MINK_TEST_CHROMIUM"

// chromium returns the path of Debian's Chromium, or skips the test
// (fails it under MINK_TEST_CHROMIUM=1).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(EnvChromium) == "1" {
		t.Fatalf("chromium not found, and %s=1: run scripts/ensure-chromium", EnvChromium)
	}
	t.Skip("chromium not found: scripts/ensure-chromium installs it (make test does)")
	return ""
}

// nodeRow is a row of the page's node table, as a person reads it.
type nodeRow struct {
	ID     string `json:"id"`
	Leases string `json:"leases"`
}

// partitionRow is a row of a table page's partitions, as a person reads it.
type partitionRow struct {
	Partition string `json:"partition"`
	Holder    string `json:"holder"`
	Epoch     string `json:"epoch"`
	Indexed   string `json:"indexed"`
	Committed string `json:"committed"`
	HW        string `json:"hw"`
}

// The rendered text of the rows (innerText: what the page shows).
const (
	readNodes = `Array.from(document.querySelectorAll('#nodes tbody tr[data-node]')).map(tr => ({
		id: tr.cells[0].innerText.trim(), leases: tr.querySelector('td.leases').innerText.trim()}))`
	readPartitions = `Array.from(document.querySelectorAll('#partitions tbody tr[data-partition]')).map(tr => ({
		partition: tr.cells[0].innerText.trim(), holder: tr.querySelector('td.holder').innerText.trim(),
		epoch: tr.querySelector('td.epoch').innerText.trim(), indexed: tr.querySelector('td.indexed').innerText.trim(),
		committed: tr.querySelector('td.committed').innerText.trim(), hw: tr.querySelector('td.hw').innerText.trim()}))`
)

// num reads a number as the page shows it (thousands separators).
func num(s string) int64 {
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// The console in a real browser: three `mink serve` nodes under auth
// principals, a table with produced records, /ui and the table's page
// open in headless Chromium with an admin's Basic credentials. What the
// pages show (node rows and lease counts; per partition holder, epoch,
// indexed and committed offsets, high watermark) equals the admin API's
// answers (GET /admin/v1/nodes, …/partitions: other statements than the
// overview's). Then a node is killed (SIGKILL): without a reload, its row
// leaves /ui and its partitions show new holders at higher epochs. A
// screenshot of each page is kept in the test's artifact directory
// (go test -artifacts -outputdir DIR; the path is logged).
func TestConsoleInChromium(t *testing.T) {
	browser := chromium(t)
	env := clustertest.New(t)
	opts := clustertest.NodeOptions{Args: []string{"--auth", "principals"}}
	first := env.StartNode(opts)
	victim := env.StartNode(opts)
	env.StartNode(opts)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id, secret, err := auth.NewStore(env.Pool()).Create(ctx, "console", []string{"*"}, true)
	require.NoError(t, err)
	api := &admin.Client{URL: first.URL(), Credential: id + ":" + secret}
	const table = "test.events"
	env.CreateTopic("events", 6)
	_, err = api.CreateTable(ctx, map[string]any{"namespace": "test", "name": "events", "topic": "events", "value_format": "raw"})
	require.NoError(t, err)
	prod := env.StartProducer("events", 6, 300)
	prod.WaitMore(t, 600, 30*time.Second)
	ends := prod.Stop(t).Ends()

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
	open := func(tab context.Context, path string) {
		t.Helper()
		_, err := chromedp.Call(tab, network.Enable, network.EnableParams{})
		require.NoError(t, err)
		_, err = chromedp.Call(tab, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"Authorization": basic}})
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(first.URL()+path)))
	}
	// Two tabs: the cluster and the table, each left to refresh itself.
	overviewTab := bctx
	open(overviewTab, "/ui")
	tableTab, cancelTab := chromedp.NewContext(bctx)
	defer cancelTab()
	open(tableTab, "/ui/tables/"+table)

	// A third tab signs in as a person does, by Basic credentials the
	// browser keeps (here given in the URL, as after its prompt): the
	// page's own fetches carry them, so it keeps refreshing.
	personTab, cancelPerson := chromedp.NewContext(bctx)
	defer cancelPerson()
	require.NoError(t, chromedp.Do(personTab, chromedp.Navigate(strings.Replace(first.URL(), "://", "://"+id+":"+secret+"@", 1)+"/ui")))
	pageTime := func() (string, string) {
		t.Helper()
		at, err := chromedp.Run(personTab, chromedp.Evaluate[string](`document.getElementById('page-time').innerText`))
		require.NoError(t, err)
		live, err := chromedp.Run(personTab, chromedp.Evaluate[string](`document.getElementById('live').className`))
		require.NoError(t, err)
		return at, live
	}
	signedInAt, _ := pageTime()

	pageNodes := func() []nodeRow {
		rows, err := chromedp.Run(overviewTab, chromedp.Evaluate[[]nodeRow](readNodes))
		require.NoError(t, err)
		return rows
	}
	pagePartitions := func() []partitionRow {
		rows, err := chromedp.Run(tableTab, chromedp.Evaluate[[]partitionRow](readPartitions))
		require.NoError(t, err)
		return rows
	}
	// apiNodes and apiPartitions are the admin API's answers in the
	// page's form.
	apiNodes := func() []nodeRow {
		nodes, err := api.Nodes(ctx)
		require.NoError(t, err)
		rows := make([]nodeRow, len(nodes))
		for i, n := range nodes {
			held := 0
			for _, scope := range n.Leases {
				if strings.Contains(scope, "/partition/") {
					held++
				}
			}
			rows[i] = nodeRow{ID: n.ID, Leases: strconv.Itoa(held)}
		}
		return rows
	}
	apiPartitions := func() []partitionRow {
		p, err := api.Partitions(ctx, table)
		require.NoError(t, err)
		rows := make([]partitionRow, len(p.Partitions))
		for i, s := range p.Partitions {
			holder := "unheld"
			if s.Holder != nil {
				holder = *s.Holder
			}
			rows[i] = partitionRow{Partition: strconv.Itoa(int(s.Partition)), Holder: holder, Epoch: strconv.FormatInt(s.Epoch, 10),
				Indexed: strconv.FormatInt(s.IndexedOffset, 10), Committed: strconv.FormatInt(s.CommittedOffset, 10),
				HW: strconv.FormatInt(s.HighWatermark, 10)}
		}
		return rows
	}
	plain := func(rows []partitionRow) []partitionRow {
		out := slices.Clone(rows)
		for i := range out {
			out[i].Epoch, out[i].Indexed = strconv.FormatInt(num(out[i].Epoch), 10), strconv.FormatInt(num(out[i].Indexed), 10)
			out[i].Committed, out[i].HW = strconv.FormatInt(num(out[i].Committed), 10), strconv.FormatInt(num(out[i].HW), 10)
		}
		return out
	}
	// eventually waits until cond holds of what the pages show, reading
	// them again every 250 ms (the pages refresh themselves every 2 s).
	eventually := func(what string, timeout time.Duration, cond func() (bool, string)) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for {
			ok, state := cond()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the console did not show %s within %v; last: %s", what, timeout, state)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	// Every record indexed and committed, the same on the page and in the
	// admin API at the same moment.
	var before []partitionRow
	eventually("the admin API's nodes and partitions", 45*time.Second, func() (bool, string) {
		nodes, wantNodes := pageNodes(), apiNodes()
		parts, wantParts := plain(pagePartitions()), apiPartitions()
		caughtUp := len(wantParts) == 6
		for _, p := range wantParts {
			caughtUp = caughtUp && p.Holder != "unheld" && p.Indexed == p.HW && p.Committed == p.HW
		}
		state := fmt.Sprintf("page nodes %v, api nodes %v; page partitions %v, api partitions %v", nodes, wantNodes, parts, wantParts)
		before = parts
		return caughtUp && len(nodes) == 3 && slices.Equal(nodes, wantNodes) && slices.Equal(parts, wantParts), state
	})
	for _, p := range before {
		pn, _ := strconv.Atoi(p.Partition)
		require.Equal(t, ends[int32(pn)], num(p.HW), "partition %s: the page's high watermark is the end of what was produced", p.Partition)
	}
	testkit.Eventually(t, 10*time.Second, 250*time.Millisecond, "the signed-in page refreshing", func() (bool, string) {
		at, live := pageTime()
		return at != signedInAt && live == "live ok", at + " " + live
	})
	shot(t, overviewTab, "overview.png")
	shot(t, tableTab, "table.png")

	// mink status prints the same facts: nodes and lease counts, the
	// partitions, the table's files and last commit.
	bin := clustertest.Binary(t)
	eventually("what mink status prints", 20*time.Second, func() (bool, string) {
		out, err := exec.CommandContext(ctx, bin, "status", "--admin", first.URL(), "--credential", id+":"+secret).CombinedOutput()
		require.NoError(t, err, "%s", out)
		cliNodes, cliParts, files, snapshot := parseStatus(string(out), table)
		pageFiles, err := chromedp.Run(tableTab, chromedp.Evaluate[string](`document.getElementById('files-count').innerText`))
		require.NoError(t, err)
		pageSnapshot, err := chromedp.Run(tableTab, chromedp.Evaluate[string](`document.getElementById('snapshot-id').innerText`))
		require.NoError(t, err)
		nodes, parts := pageNodes(), plain(pagePartitions())
		return slices.Equal(nodes, cliNodes) && slices.Equal(parts, cliParts) && num(pageFiles) == num(files) && num(pageFiles) > 0 &&
				pageSnapshot == snapshot && snapshot != "",
			fmt.Sprintf("page %v %v files %s snapshot %s; mink status:\n%s", nodes, parts, pageFiles, pageSnapshot, out)
	})

	// Kill a node: its row leaves /ui, and its partitions move to live
	// nodes at a higher epoch, both pages refreshing by themselves.
	moved := map[string]int64{} // partition → epoch before
	for _, p := range before {
		if p.Holder == victim.ID {
			moved[p.Partition] = num(p.Epoch)
		}
	}
	require.NotEmpty(t, moved, "the victim held partitions: %v", before)
	victim.Kill()
	eventually("the killed node gone and its partitions moved", 30*time.Second, func() (bool, string) {
		nodes, parts := pageNodes(), pagePartitions()
		gone := len(nodes) == 2 && !slices.ContainsFunc(nodes, func(n nodeRow) bool { return n.ID == victim.ID })
		for _, p := range parts {
			if old, ok := moved[p.Partition]; ok && (p.Holder == victim.ID || p.Holder == "unheld" || num(p.Epoch) <= old) {
				gone = false
			}
		}
		return gone, fmt.Sprintf("nodes %v, partitions %v", nodes, parts)
	})
	// And the page agrees with the admin API again.
	eventually("the admin API's answers after the takeover", 20*time.Second, func() (bool, string) {
		nodes, wantNodes := pageNodes(), apiNodes()
		parts, wantParts := plain(pagePartitions()), apiPartitions()
		return slices.Equal(nodes, wantNodes) && slices.Equal(parts, wantParts),
			fmt.Sprintf("page %v %v, api %v %v", nodes, parts, wantNodes, wantParts)
	})
	shot(t, overviewTab, "overview-after-kill.png")
}

// parseStatus reads what `mink status` printed: the node rows (id and
// partition count), the rows of table's partitions (a holder "-" as the
// page's "unheld"), its files count and last commit's snapshot id.
func parseStatus(out, table string) (nodes []nodeRow, parts []partitionRow, files, snapshot string) {
	lines := strings.Split(out, "\n")
	i := 1
	for ; i < len(lines) && lines[i] != ""; i++ {
		f := strings.Fields(lines[i])
		nodes = append(nodes, nodeRow{ID: f[0], Leases: f[len(f)-2]})
	}
	for ; i < len(lines) && !strings.HasPrefix(lines[i], table+"  topic:"); i++ {
	}
	for i += 2; i < len(lines) && strings.HasPrefix(lines[i], "  "); i++ {
		f := strings.Fields(lines[i])
		n := len(f)
		holder := f[1]
		if holder == "-" {
			holder = "unheld"
		}
		parts = append(parts, partitionRow{Partition: f[0], Holder: holder, Epoch: f[2], Indexed: f[n-5], Committed: f[n-4], HW: f[n-3]})
	}
	for ; i < len(lines) && lines[i] != ""; i++ {
		if v, ok := strings.CutPrefix(lines[i], "files: "); ok {
			files, _, _ = strings.Cut(v, ",")
		}
		if v, ok := strings.CutPrefix(lines[i], "last commit: snapshot "); ok {
			snapshot, _, _ = strings.Cut(v, " ")
		}
	}
	return nodes, parts, files, snapshot
}

// shot saves a PNG of the whole page of tab in the test's artifact
// directory and logs its path.
func shot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(t.ArtifactDir(), name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot: %s", path)
}
