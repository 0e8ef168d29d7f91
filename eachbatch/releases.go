package eachbatch

import (
	"fmt"
	"strconv"
	"strings"
)

// Rule is what a group of client versions does on a cache clear, with the evidence that
// puts its versions together. Policy is the model's policy for it, or empty when the
// versions differ from every modelled policy (NotModelled says how).
type Rule struct {
	Name        string // e.g. "1.8.0-1.10.0"
	Policy      Policy // "" when not modelled
	NotModelled string // why the model cannot run these versions
	Rewind      string // #clearCacheAndResetPositions: which partitions are seeked back, and to what
	EachBatch   string // does the eachBatch resolve path record a last-consumed offset?
	EachMessage string // when #messageProcessor records the last-consumed offset
	Pause       string // #pauseInternal's repair seek
	FetchSize   string // how #messageCacheMaxSize, the size of a fetch, is set
	Evidence    string // how the versions were compared
}

// SourceLines is where each rule is in a release's lib/kafkajs/_consumer.js (line numbers
// of the npm tarball's file; "set" is the #lastConsumedOffsets.set line).
type SourceLines struct {
	Clear, EachBatch, EachMessage, Pause, Fetch string
	// Wait is where the workers wait for records, for the releases before 1.3.1 (whose
	// wait differs from the later ones'): empty for the others.
	Wait string
}

// Release is one client version the model knows by name: a published npm release of
// @confluentinc/kafka-javascript, or a named patch.
type Release struct {
	Name   string // "1.9.1", or the patch's name ("head", "pr518")
	Patch  bool   // a patch on a release, not a published release
	Group  *Rule
	Source SourceLines
}

// The rule groups, oldest first. The release rows below name one each.
var (
	groupOldest = Rule{
		Name:        "0.2.0-0.3.0",
		Policy:      V0_2_0,
		Rewind:      rewindLastConsumed,
		EachBatch:   eachBatchNone,
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair + " (passes a second argument, false, that #seekInternal ignores)",
		FetchSize:   fetchDoubling,
		Evidence: "_consumer.js and _consumer_cache.js are byte-identical in 0.2.0, 0.2.1 and 0.3.0; the four rules' " +
			"functions have 1.3.0's text and MessageCache.nextN is 1.0.0's. 0.3.0 to 1.0.0 adds setDefaultConsumeTimeout(0), " +
			"queue_non_empty_cb (#queueNonEmptyCb) and #nextFetchRetry's 1 s timer, and drops the termination from " +
			"#cacheExpirationLoop's wait; the rest of that diff is comments, headers, dependentAdmin and connection errors. " +
			"What the model runs for these releases (policy v0.2.0: v1.0.0 with 0.x's wait for records, eachbatch/block.go): " +
			"the consume call waits for its first record up to node-rdkafka's default consume timeout of 1000 ms " +
			"(lib/kafka-consumer.js 22, 144, 464; --consume-timeout), holding #fetchInProgress; a worker that finds every " +
			"partition taken looks again after 1 ms (#nextFetchRetry 1266-1275: Timer.withTimeout(1)); no valve",
	}
	group100 = Rule{
		Name:        "1.0.0",
		Policy:      V1_0_0,
		Rewind:      rewindLastConsumed,
		EachBatch:   eachBatchNone,
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair + " (passes a second argument, false, that #seekInternal ignores)",
		FetchSize:   fetchDoubling,
		Evidence: "_consumer.js of 1.0.0 is byte-identical to 1.2.0's and 1.3.0's; _consumer_cache.js differs from " +
			"1.2.0's only in MessageCache.nextN (236-252), which lets go of a partition as soon as a batch comes back " +
			"short: #removeEmptyPartition when fewer records than asked were taken (or any, with no limit), not only " +
			"when none were. The worker serving that batch then holds no partition, so the others fetch while it " +
			"works, and records of the same partition fetched meanwhile form a new partition cache that another " +
			"worker takes: two workers handle one partition at once. The model runs that (policy v1.0.0: v1.3.0 " +
			"with 1.0.0's nextN); eachMessage (MessageCache.next) is 1.3.0's",
	}
	group130 = Rule{
		Name:        "1.2.0-1.3.0",
		Policy:      V1_3_0,
		Rewind:      rewindLastConsumed,
		EachBatch:   eachBatchNone,
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair + " (passes a second argument, false, that #seekInternal ignores)",
		FetchSize:   fetchDoubling,
		Evidence: "_consumer.js and _consumer_cache.js are byte-identical in 1.2.0 and 1.3.0. The rules, the fetch " +
			"size, batches of 32 and #discardMessages are 1.3.1's to 1.6.0's (policy v1.6.0); what 1.3.1 changed, " +
			"and the model runs for these releases (policy v1.3.0): no #nonEmpty and no 1 s valve in " +
			"#cacheExpirationLoop; a worker that found nothing awaits the fetch in progress or a 1 s timer of its " +
			"own (#nextFetchRetry) that only #queueNonEmptyCb ends early, not a partition becoming available nor " +
			"the workers' termination (so pending operations wait for the timers); workers that reach the fetch " +
			"together take turns fetching without pause while nothing comes (bounded in the model to one fetch " +
			"per 100 ms and one at each arrival: eachbatch/retry.go); #batchProcessor's end-of-batch seek has no " +
			"_seeked check; #worker catches the fetcher's errors only (the handler's are caught in " +
			"#batchProcessor and #messageProcessor in both)",
	}
	groupOldFetch = Rule{
		Name:        "1.3.1-1.6.0",
		Policy:      V1_6_0,
		Rewind:      rewindLastConsumed,
		EachBatch:   eachBatchNone,
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair,
		FetchSize:   fetchDoubling,
		Evidence: "the four rules' functions and #cacheExpirationLoop (with the valve from 1.3.1) have the same text " +
			"in these releases; the rewind rule is 1.10.0's. What 1.7.0 changed around it, and the model runs for " +
			"these releases (policy v1.6.0): the doubling fetch size, reset to 1 by the clear (#messageCacheMaxSize = 1, " +
			"#increaseCount = 0); eachBatch's batches of 32 (#runInternal's const maxBatchSize = 32: no " +
			"js.consumer.max.batch.size); #discardMessages where 1.7.0 has #returnMessages (a worker holding records " +
			"when an operation is pending drops them, with a last-consumed entry of first - 1, and leaves its loop); " +
			"#executePendingOperations' for...of (1.7.0: while/shift, the same operations in the same order); the " +
			"rest of the 1.6.0 to 1.7.0 diff is the js.consumer.* properties, the worker id passed to payloads, stats_cb, " +
			"offset lags floored at 0 and the removed consume() stub",
	}
	groupRound = Rule{
		Name:        "1.7.0",
		Policy:      V1_7_0,
		Rewind:      rewindLastConsumed,
		EachBatch:   eachBatchNone,
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair,
		FetchSize:   "Math.round of the per-worker estimate, times the concurrency, rounded up to a batch set: below half a record it is 0, and consume(0) starts the client's consume loop, which wedges the consumer",
		Evidence: "_consumer.js differs from 1.8.0 only in #updateMaxMessageCacheSize (and a comment); _consumer_cache.js " +
			"is 1.8.0's. #updateMaxMessageCacheSize (994-1014) rounds the per-worker estimate with Math.round (line 1010) " +
			"where 1.8.0 takes Math.ceil: a slow handler's estimate rounds to 0, and the next fetch (consume(0, cb), 1059) " +
			"starts lib/kafka-consumer.js's _consumeLoop (consume 477-504 reads 0 as no number), which drains every record " +
			"the client receives while every fetch throws: the consumer is wedged (1.8.0 changelog: #418, #424). The model " +
			"rounds as 1.7.0 does and runs that wedge (policy v1.7.0)",
	}
	group1100 = Rule{
		Name:        "1.8.0-1.10.0",
		Policy:      V1_10_0,
		Rewind:      rewindLastConsumed,
		EachBatch:   eachBatchNone,
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair,
		FetchSize:   fetchCeil,
		Evidence: "_consumer.js of 1.8.0, 1.8.2 and 1.9.0 is byte-identical, as is 1.9.1's to 1.10.0's; 1.9.0 to 1.9.1 " +
			"changes only the event.error callback's logging; _consumer_cache.js is the same file in all five",
	}
	group1101 = Rule{
		Name:        "1.10.1",
		Policy:      V1_10_1,
		Rewind:      "partitions with a last-consumed entry are seeked to entry + 1; the others are skipped",
		EachBatch:   "yes: the resolve path records the resolved offset (#lastConsumedOffsets.set after the store)",
		EachMessage: "after the handler returns and the offset is stored",
		Pause:       pauseRepair,
		FetchSize:   fetchCeil,
		Evidence: "1.10.0 to 1.10.1: the clear seeks to offset + 1, #eachBatchPayload_resolveOffsets sets " +
			"#lastConsumedOffsets, #messageProcessor sets it after _offsetsStoreSingle, #returnMessages' entry has " +
			"leader epoch -1; nothing else in _consumer.js or _consumer_cache.js",
	}
	groupHead = Rule{
		Name:        "head",
		Policy:      Head,
		Rewind:      "as 1.10.1, and a partition with no entry is seeked to its oldest cached record (remembered before MessageCache.clear)",
		EachBatch:   group1101.EachBatch,
		EachMessage: group1101.EachMessage,
		Pause:       pauseRepair,
		FetchSize:   fetchCeil,
		Evidence:    "the reporter's patch (issue text, /work/shared/seeds): pendingHeadMessages() before clear(), modelled on 1.10.1",
	}
	groupPR518 = Rule{
		Name:        "pr518",
		Policy:      PR518,
		Rewind:      rewindLastConsumed,
		EachBatch:   "yes: the resolve path records the resolved offset (the PR's fix)",
		EachMessage: eachMessageBefore,
		Pause:       pauseRepair + " (the path PR #518 fixes for eachBatch: issue #517)",
		FetchSize:   fetchCeil,
		Evidence: "the PR's description on GitHub (confluentinc/confluent-kafka-javascript#518, open, fixes #517): \"Update " +
			"#lastConsumedOffsets in #eachBatchPayload_resolveOffsets, mirroring #messageProcessor\", on 1.10.0, whose " +
			"clear seeks to the entry itself (no + 1) and whose #messageProcessor sets it before the handler: a clear then " +
			"rewinds an eachBatch partition to its last resolved record, delivered again. Modelled from the description " +
			"(policy pr518): the diff itself was not readable here",
	}
)

const (
	rewindLastConsumed = "partitions with a last-consumed entry are seeked to the entry itself (the record is delivered again); the others are skipped"
	eachBatchNone      = "no: the resolve path stores the offset but never sets #lastConsumedOffsets"
	eachMessageBefore  = "before the handler runs (the record in hand)"
	pauseRepair        = "markStale, pause, then seek to entry + 1 where there is a last-consumed entry"
	fetchDoubling      = "doubled after two full fetches in a row (to at most 1024), 80% of a short fetch (at least 1); the clear resets it to 1 (#increaseMaxSize, #decreaseMaxSize)"
	fetchCeil          = "Math.ceil of the per-worker estimate (js.consumer.max.cache.size.per.worker.ms of handling), times the concurrency, rounded up to a batch set (#updateMaxMessageCacheSize)"
)

// Releases lists every published release from the first with the cache expiry
// (#cacheExpirationLoop, first published in 0.1.17-devel; 0.2.0 is the first release)
// to 1.10.1, then the named patches. A new upstream release is one row here (and one
// in docs/releases.md, rendered by the test's -update).
var Releases = []Release{
	// lines: each release's npm tarball, lib/kafkajs/_consumer.js.
	{Name: "0.2.0", Group: &groupOldest, Source: SourceLines{Clear: "#clearCacheAndResetPositions 250-283 (skip 261, seek 269)", EachBatch: "#eachBatchPayload_resolveOffsets 703-732 (no set)", EachMessage: "#messageProcessor 1120-1169 (set 1128)", Pause: "#pauseInternal 1631-1655 (seek 1653)", Fetch: "#increaseMaxSize 753-761, #decreaseMaxSize 768-771, reset 255", Wait: "#nextFetchRetry 1266-1275 (Timer.withTimeout(1)); #worker 1289-1316; #cacheExpirationLoop 1343-1368 (no valve); MessageCache.nextN 234-250 (_consumer_cache.js: a short batch lets go of the partition)"}},
	{Name: "0.2.1", Group: &groupOldest, Source: SourceLines{Clear: "#clearCacheAndResetPositions 250-283 (skip 261, seek 269)", EachBatch: "#eachBatchPayload_resolveOffsets 703-732 (no set)", EachMessage: "#messageProcessor 1120-1169 (set 1128)", Pause: "#pauseInternal 1631-1655 (seek 1653)", Fetch: "#increaseMaxSize 753-761, #decreaseMaxSize 768-771, reset 255", Wait: "#nextFetchRetry 1266-1275 (Timer.withTimeout(1)); #worker 1289-1316; #cacheExpirationLoop 1343-1368 (no valve); MessageCache.nextN 234-250 (_consumer_cache.js: a short batch lets go of the partition)"}},
	{Name: "0.3.0", Group: &groupOldest, Source: SourceLines{Clear: "#clearCacheAndResetPositions 250-283 (skip 261, seek 269)", EachBatch: "#eachBatchPayload_resolveOffsets 703-732 (no set)", EachMessage: "#messageProcessor 1120-1169 (set 1128)", Pause: "#pauseInternal 1631-1655 (seek 1653)", Fetch: "#increaseMaxSize 753-761, #decreaseMaxSize 768-771, reset 255", Wait: "#nextFetchRetry 1266-1275 (Timer.withTimeout(1)); #worker 1289-1316; #cacheExpirationLoop 1343-1368 (no valve); MessageCache.nextN 234-250 (_consumer_cache.js: a short batch lets go of the partition)"}},
	{Name: "1.0.0", Group: &group100, Source: SourceLines{Clear: "#clearCacheAndResetPositions 311-344 (skip 322, seek 330)", EachBatch: "#eachBatchPayload_resolveOffsets 784-813 (no set)", EachMessage: "#messageProcessor 1203-1252 (set 1211)", Pause: "#pauseInternal 1738-1762 (seek 1760)", Fetch: "#increaseMaxSize 836-844, #decreaseMaxSize 852-855, reset 316", Wait: "#nextFetchRetry 1357-1379 (1 s timer); #queueNonEmptyCb 1351-1355; #worker 1394-1421; #cacheExpirationLoop 1449-1471 (no valve); end-of-batch seek 1319 (no _seeked); MessageCache.nextN 236-252 (_consumer_cache.js: a short batch lets go of the partition)"}},
	{Name: "1.2.0", Group: &group130, Source: SourceLines{Clear: "#clearCacheAndResetPositions 311-344 (skip 322, seek 330)", EachBatch: "#eachBatchPayload_resolveOffsets 784-813 (no set)", EachMessage: "#messageProcessor 1203-1252 (set 1211)", Pause: "#pauseInternal 1738-1762 (seek 1760)", Fetch: "#increaseMaxSize 836-844, #decreaseMaxSize 852-855, reset 316", Wait: "#nextFetchRetry 1357-1379 (1 s timer); #queueNonEmptyCb 1351-1355; #worker 1394-1421; #cacheExpirationLoop 1449-1471 (no valve); end-of-batch seek 1319 (no _seeked); MessageCache.nextN 236-251 (_consumer_cache.js)"}},
	{Name: "1.3.0", Group: &group130, Source: SourceLines{Clear: "#clearCacheAndResetPositions 311-344 (skip 322, seek 330)", EachBatch: "#eachBatchPayload_resolveOffsets 784-813 (no set)", EachMessage: "#messageProcessor 1203-1252 (set 1211)", Pause: "#pauseInternal 1738-1762 (seek 1760)", Fetch: "#increaseMaxSize 836-844, #decreaseMaxSize 852-855, reset 316", Wait: "#nextFetchRetry 1357-1379 (1 s timer); #queueNonEmptyCb 1351-1355; #worker 1394-1421; #cacheExpirationLoop 1449-1471 (no valve); end-of-batch seek 1319 (no _seeked); MessageCache.nextN 236-251 (_consumer_cache.js)"}},
	{Name: "1.3.1", Group: &groupOldFetch, Source: SourceLines{Clear: "#clearCacheAndResetPositions 309-342 (skip 320, seek 328)", EachBatch: "#eachBatchPayload_resolveOffsets 784-813 (no set)", EachMessage: "#messageProcessor 1229-1278 (set 1237)", Pause: "#pauseInternal 1776-1800 (seek 1798)", Fetch: "#increaseMaxSize 836-844, #decreaseMaxSize 852-855, reset 314"}},
	{Name: "1.3.2", Group: &groupOldFetch, Source: SourceLines{Clear: "#clearCacheAndResetPositions 309-342 (skip 320, seek 328)", EachBatch: "#eachBatchPayload_resolveOffsets 784-813 (no set)", EachMessage: "#messageProcessor 1229-1278 (set 1237)", Pause: "#pauseInternal 1776-1800 (seek 1798)", Fetch: "#increaseMaxSize 836-844, #decreaseMaxSize 852-855, reset 314"}},
	{Name: "1.4.0", Group: &groupOldFetch, Source: SourceLines{Clear: "#clearCacheAndResetPositions 309-342 (skip 320, seek 328)", EachBatch: "#eachBatchPayload_resolveOffsets 803-832 (no set)", EachMessage: "#messageProcessor 1248-1297 (set 1256)", Pause: "#pauseInternal 1795-1819 (seek 1817)", Fetch: "#increaseMaxSize 855-863, #decreaseMaxSize 871-874, reset 314"}},
	{Name: "1.4.1", Group: &groupOldFetch, Source: SourceLines{Clear: "#clearCacheAndResetPositions 309-342 (skip 320, seek 328)", EachBatch: "#eachBatchPayload_resolveOffsets 803-832 (no set)", EachMessage: "#messageProcessor 1248-1297 (set 1256)", Pause: "#pauseInternal 1795-1819 (seek 1817)", Fetch: "#increaseMaxSize 855-863, #decreaseMaxSize 871-874, reset 314"}},
	{Name: "1.5.0", Group: &groupOldFetch, Source: SourceLines{Clear: "#clearCacheAndResetPositions 309-342 (skip 320, seek 328)", EachBatch: "#eachBatchPayload_resolveOffsets 801-830 (no set)", EachMessage: "#messageProcessor 1265-1314 (set 1273)", Pause: "#pauseInternal 1812-1836 (seek 1834)", Fetch: "#increaseMaxSize 853-861, #decreaseMaxSize 869-872, reset 314"}},
	{Name: "1.6.0", Group: &groupOldFetch, Source: SourceLines{Clear: "#clearCacheAndResetPositions 309-342 (skip 320, seek 328)", EachBatch: "#eachBatchPayload_resolveOffsets 801-830 (no set)", EachMessage: "#messageProcessor 1265-1314 (set 1273)", Pause: "#pauseInternal 1812-1836 (seek 1834)", Fetch: "#increaseMaxSize 853-861, #decreaseMaxSize 869-872, reset 314"}},
	{Name: "1.7.0", Group: &groupRound, Source: SourceLines{Clear: "#clearCacheAndResetPositions 326-357 (skip 335, seek 343)", EachBatch: "#eachBatchPayload_resolveOffsets 855-884 (no set)", EachMessage: "#messageProcessor 1318-1367 (set 1326)", Pause: "#pauseInternal 1844-1868 (seek 1866)", Fetch: "#updateMaxMessageCacheSize 994-1014 (Math.round 1010)"}},
	{Name: "1.8.0", Group: &group1100, Source: SourceLines{Clear: "#clearCacheAndResetPositions 329-360 (skip 338, seek 346)", EachBatch: "#eachBatchPayload_resolveOffsets 858-887 (no set)", EachMessage: "#messageProcessor 1332-1381 (set 1340)", Pause: "#pauseInternal 1858-1882 (seek 1880)", Fetch: "#updateMaxMessageCacheSize 1004-1028"}},
	{Name: "1.8.2", Group: &group1100, Source: SourceLines{Clear: "#clearCacheAndResetPositions 329-360 (skip 338, seek 346)", EachBatch: "#eachBatchPayload_resolveOffsets 858-887 (no set)", EachMessage: "#messageProcessor 1332-1381 (set 1340)", Pause: "#pauseInternal 1858-1882 (seek 1880)", Fetch: "#updateMaxMessageCacheSize 1004-1028"}},
	{Name: "1.9.0", Group: &group1100, Source: SourceLines{Clear: "#clearCacheAndResetPositions 329-360 (skip 338, seek 346)", EachBatch: "#eachBatchPayload_resolveOffsets 858-887 (no set)", EachMessage: "#messageProcessor 1332-1381 (set 1340)", Pause: "#pauseInternal 1858-1882 (seek 1880)", Fetch: "#updateMaxMessageCacheSize 1004-1028"}},
	{Name: "1.9.1", Group: &group1100, Source: SourceLines{Clear: "#clearCacheAndResetPositions 329-360 (skip 338, seek 346)", EachBatch: "#eachBatchPayload_resolveOffsets 857-886 (no set)", EachMessage: "#messageProcessor 1331-1380 (set 1339)", Pause: "#pauseInternal 1857-1881 (seek 1879)", Fetch: "#updateMaxMessageCacheSize 1003-1027"}},
	{Name: "1.10.0", Group: &group1100, Source: SourceLines{Clear: "#clearCacheAndResetPositions 329-360 (skip 338, seek 346)", EachBatch: "#eachBatchPayload_resolveOffsets 857-886 (no set)", EachMessage: "#messageProcessor 1331-1380 (set 1339)", Pause: "#pauseInternal 1857-1881 (seek 1879)", Fetch: "#updateMaxMessageCacheSize 1003-1027"}},
	{Name: "1.10.1", Group: &group1101, Source: SourceLines{Clear: "#clearCacheAndResetPositions 329-360 (skip 338, seek 346)", EachBatch: "#eachBatchPayload_resolveOffsets 857-892 (set 882)", EachMessage: "#messageProcessor 1337-1386 (set 1377)", Pause: "#pauseInternal 1866-1890 (seek 1888)", Fetch: "#updateMaxMessageCacheSize 1009-1033"}},
	{Name: "head", Patch: true, Group: &groupHead, Source: SourceLines{Clear: "the reporter's patch: #clearCacheAndResetPositions, pendingHeadMessages (_consumer_cache.js)", EachBatch: "as 1.10.1", EachMessage: "as 1.10.1", Pause: "as 1.10.1", Fetch: "as 1.10.1"}},
	{Name: "pr518", Patch: true, Group: &groupPR518, Source: SourceLines{Clear: "as 1.10.0", EachBatch: "PR #518: #eachBatchPayload_resolveOffsets sets #lastConsumedOffsets", EachMessage: "as 1.10.0", Pause: "as 1.10.0", Fetch: "as 1.10.0"}},
}

// patchAliases are the other spellings of the patches' names.
var patchAliases = map[string]string{"pr-518": "pr518", "#518": "pr518", "518": "pr518", "reporter": "head"}

// LookupClient finds a client version by name: a release (v1.9.1 or 1.9.1), a patch
// (head, pr518), or a policy's own name (v1.10.0). An unknown name is an error naming
// the known ones and, for a version number, the nearest release.
func LookupClient(s string) (Release, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	if a, ok := patchAliases[name]; ok {
		name = a
	}
	name = strings.TrimPrefix(name, "v")
	for _, r := range Releases {
		if r.Name == name {
			return r, nil
		}
	}
	msg := fmt.Sprintf("unknown client version %q", s)
	if n, ok := NearestRelease(name); ok {
		msg += fmt.Sprintf(" (nearest known release: %s)", n.Name)
	}
	return Release{}, fmt.Errorf("%s; known: %s", msg, strings.Join(KnownClients(), ", "))
}

// KnownClients lists the names LookupClient accepts, releases then patches.
func KnownClients() []string {
	var out []string
	for _, r := range Releases {
		out = append(out, r.Name)
	}
	return out
}

// ParsePolicy parses a client version (see LookupClient) to the policy that models it.
// A known release whose rule the model cannot run is an error saying why.
func ParsePolicy(s string) (Policy, error) {
	r, err := LookupClient(s)
	if err != nil {
		return "", err
	}
	if r.Group.Policy == "" {
		return "", fmt.Errorf("client %s is known but not modelled: %s", r.Name, r.Group.NotModelled)
	}
	return r.Group.Policy, nil
}

// ReleasesOf lists the releases and patches a policy models, in table order.
func ReleasesOf(p Policy) []string {
	var out []string
	for _, r := range Releases {
		if r.Group.Policy == p {
			out = append(out, r.Name)
		}
	}
	return out
}

// Rules lists the rule groups in table order.
func Rules() []*Rule {
	var out []*Rule
	for _, r := range Releases {
		if len(out) == 0 || out[len(out)-1] != r.Group {
			out = append(out, r.Group)
		}
	}
	return out
}

// semver parses MAJOR.MINOR.PATCH (a pre-release or build suffix is ignored).
func semver(s string) ([3]int, bool) {
	var v [3]int
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// NearestRelease is the published release nearest to a version number, on the line of
// versions ordered by semver (MAJOR*10^6 + MINOR*10^3 + PATCH): the nearer of the known
// releases below and above it; the later one on a tie.
func NearestRelease(s string) (Release, bool) {
	want, ok := semver(strings.TrimPrefix(s, "v"))
	if !ok {
		return Release{}, false
	}
	key := func(v [3]int) int { return v[0]*1_000_000 + v[1]*1_000 + v[2] }
	var best Release
	bestDist := -1
	for _, r := range Releases {
		if r.Patch {
			continue
		}
		v, _ := semver(r.Name)
		d := key(v) - key(want)
		if d < 0 {
			d = -d
		}
		if bestDist < 0 || d <= bestDist { // the table is in version order: <= keeps the later
			best, bestDist = r, d
		}
	}
	return best, bestDist >= 0
}

// ReleaseTable renders the release table of docs/releases.md (Markdown): one row per
// release and patch, then each rule group with its evidence.
func ReleaseTable() string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("| release | model | rewind rule (cache clear) | eachBatch bookkeeping | eachMessage bookkeeping | pause repair | fetch size | source lines (lib/kafkajs/_consumer.js) |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range Releases {
		name := r.Name
		if r.Patch {
			name += " (patch)"
		}
		model := string(r.Group.Policy)
		if model == "" {
			model = "not modelled"
		}
		parts := []string{r.Source.Clear, r.Source.EachBatch, r.Source.EachMessage, r.Source.Pause, r.Source.Fetch}
		if r.Source.Wait != "" {
			parts = append(parts, r.Source.Wait)
		}
		src := strings.Join(parts, "; ")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", cell(name), cell(model), cell(r.Group.Rewind),
			cell(r.Group.EachBatch), cell(r.Group.EachMessage), cell(r.Group.Pause), cell(r.Group.FetchSize), cell(src))
	}
	b.WriteString("\n| rule group | releases | model | evidence | why not modelled |\n| --- | --- | --- | --- | --- |\n")
	for _, g := range Rules() {
		var names []string
		for _, r := range Releases {
			if r.Group == g {
				names = append(names, r.Name)
			}
		}
		model, why := string(g.Policy), g.NotModelled
		if model == "" {
			model = "not modelled"
		}
		if why == "" {
			why = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(g.Name), strings.Join(names, ", "), model, cell(g.Evidence), cell(why))
	}
	return b.String()
}
