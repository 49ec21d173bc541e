// Command pgx-bench runs one of MagicStack's benchmark queries
// (github.com/MagicStack/pgbench, queries/*.json) with pgx v5 for
// pgpipe-bench's `magicstack` workload, and prints one JSON line:
//
//	{"driver":"pgx","query":"pg_type","ops":N,"rows":R,"elapsed_secs":S,"cpu_secs":C}
//
// Usage: pgx-bench URL QUERY CONCURRENCY DURATION_SECS SEARCH_PATH
//
// The tables are made by pgpipe-bench (MagicStack's setup SQL) in the schema
// SEARCH_PATH names. Each of CONCURRENCY workers holds one connection of a
// pgxpool (as MagicStack's pgx worker holds one connection) and runs the
// query in a loop: pgx's default QueryExecModeCacheStatement (prepared once
// per connection, binary results), CopyFrom (binary COPY) for copyfrom,
// SendBatch (one round trip, one Sync) for batch. cpu_secs is this process's
// user + system time (getrusage) over the measured loop only.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MagicStack's queries/*.json, verbatim.
const (
	pgTypeSQL = "select typname, typnamespace, typowner, typlen, typbyval, typcategory, typispreferred, typisdefined, typdelim, typrelid, typelem, typarray from pg_type where typtypmod = $1 and typisdefined = $2"
	seriesSQL = "SELECT i FROM generate_series(1, $1) AS i"
	bytesSQL  = "SELECT * FROM _bytes"
	arraysSQL = "SELECT * FROM _test"
	insertSQL = "INSERT INTO _test (a, b, c, d, e, f, g) VALUES ($1, $2, $3, $4, $5, $6, $7);"
	onePlus   = "SELECT 1+1"
)

var copyColumns = []string{"a", "b", "c", "d", "e", "f", "g"}

func row() []any {
	return []any{int32(10), int32(11), int32(10), "TESTTESTTEST", 10.333, int32(12341234), "123412341234"}
}

func cpuSecs() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// one runs the query once on conn and returns the rows it read or wrote.
func one(ctx context.Context, conn *pgxpool.Conn, query string, copyRows [][]any) (int64, error) {
	switch query {
	case "pg_type":
		rows, err := conn.Query(ctx, pgTypeSQL, int32(-1), true)
		if err != nil {
			return 0, err
		}
		var (
			name                          string
			ns, owner, relid, elem, array uint32
			typlen                        int16
			byval, preferred, defined     bool
			category, delim               byte
		)
		n := int64(0)
		_, err = pgx.ForEachRow(rows, []any{&name, &ns, &owner, &typlen, &byval, &category, &preferred, &defined, &delim, &relid, &elem, &array}, func() error {
			n++
			return nil
		})
		if err == nil && n == 0 {
			err = fmt.Errorf("pg_type: no rows")
		}
		return n, err
	case "generate_series":
		rows, err := conn.Query(ctx, seriesSQL, int32(1000))
		if err != nil {
			return 0, err
		}
		var i int32
		n, sum := int64(0), int64(0)
		_, err = pgx.ForEachRow(rows, []any{&i}, func() error { n++; sum += int64(i); return nil })
		if err == nil && (n != 1000 || sum != 500500) {
			err = fmt.Errorf("generate_series: %d rows, sum %d", n, sum)
		}
		return n, err
	case "large_object":
		rows, err := conn.Query(ctx, bytesSQL)
		if err != nil {
			return 0, err
		}
		var b []byte
		n := int64(0)
		_, err = pgx.ForEachRow(rows, []any{&b}, func() error {
			if len(b) != 1000 || b[0] != 'a' {
				return fmt.Errorf("large_object: a value of %d bytes", len(b))
			}
			n++
			return nil
		})
		if err == nil && n != 100 {
			err = fmt.Errorf("large_object: %d rows", n)
		}
		return n, err
	case "arrays":
		rows, err := conn.Query(ctx, arraysSQL)
		if err != nil {
			return 0, err
		}
		var a []int32
		n := int64(0)
		_, err = pgx.ForEachRow(rows, []any{&a}, func() error {
			if len(a) != 100 || a[0] != 1 || a[99] != 100 {
				return fmt.Errorf("arrays: an array of %d values", len(a))
			}
			n++
			return nil
		})
		if err == nil && n != 100 {
			err = fmt.Errorf("arrays: %d rows", n)
		}
		return n, err
	case "copyfrom":
		n, err := conn.CopyFrom(ctx, pgx.Identifier{"_test"}, copyColumns, pgx.CopyFromRows(copyRows))
		if err == nil && n != int64(len(copyRows)) {
			err = fmt.Errorf("copyfrom: %d rows copied", n)
		}
		return n, err
	case "batch":
		b := &pgx.Batch{}
		for _, r := range copyRows {
			b.Queue(insertSQL, r...)
		}
		br := conn.SendBatch(ctx, b)
		for range copyRows {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return 0, err
			}
			if tag.RowsAffected() != 1 {
				br.Close()
				return 0, fmt.Errorf("batch: %s", tag)
			}
		}
		return int64(len(copyRows)), br.Close()
	case "oneplusone":
		var v int32
		if err := conn.QueryRow(ctx, onePlus).Scan(&v); err != nil {
			return 0, err
		}
		if v != 2 {
			return 0, fmt.Errorf("oneplusone: %d", v)
		}
		return 1, nil
	}
	return 0, fmt.Errorf("unknown query %q", query)
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: pgx-bench URL QUERY CONCURRENCY DURATION_SECS SEARCH_PATH")
		os.Exit(2)
	}
	url, query := os.Args[1], os.Args[2]
	concurrency, err := strconv.Atoi(os.Args[3])
	if err != nil || concurrency < 1 {
		fmt.Fprintln(os.Stderr, "bad concurrency")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[4], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad duration")
		os.Exit(2)
	}
	ctx := context.Background()
	config, err := pgxpool.ParseConfig(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	config.MaxConns = int32(concurrency)
	config.MinConns = int32(concurrency)
	config.ConnConfig.RuntimeParams["search_path"] = os.Args[5]
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer pool.Close()

	var copyRows [][]any
	switch query {
	case "copyfrom":
		copyRows = make([][]any, 10000)
	case "batch":
		copyRows = make([][]any, 1000)
	}
	for i := range copyRows {
		copyRows[i] = row()
	}

	// Connect and warm every connection (prepares its statement) before
	// the clock starts.
	conns := make([]*pgxpool.Conn, concurrency)
	for i := range conns {
		if conns[i], err = pool.Acquire(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := one(ctx, conns[i], query, copyRows); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ops, rows int64
		firstErr  error
	)
	duration := time.Duration(secs * float64(time.Second))
	cpu0 := cpuSecs()
	start := time.Now()
	for _, conn := range conns {
		wg.Add(1)
		go func(conn *pgxpool.Conn) {
			defer wg.Done()
			var o, r int64
			var err error
			for time.Since(start) < duration {
				var n int64
				if n, err = one(ctx, conn, query, copyRows); err != nil {
					break
				}
				o++
				r += n
			}
			mu.Lock()
			ops += o
			rows += r
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}(conn)
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	cpu := cpuSecs() - cpu0
	for _, c := range conns {
		c.Release()
	}
	if firstErr != nil {
		fmt.Fprintln(os.Stderr, firstErr)
		os.Exit(1)
	}
	out, _ := json.Marshal(map[string]any{
		"driver": "pgx", "query": query, "ops": ops, "rows": rows,
		"elapsed_secs": elapsed, "cpu_secs": cpu,
	})
	fmt.Println(string(out))
}
