package main

import (
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// dayLayout is the key format for daily buckets, in UTC.
const dayLayout = "2006-01-02"

// maxReferrersPerLink caps how many distinct referrer hosts are tracked
// per link; the rest are counted under "other".
const maxReferrersPerLink = 50

// DailyCount is the number of clicks a link received on one UTC day.
type DailyCount struct {
	Day    string `json:"day"`
	Clicks int    `json:"clicks"`
}

// LinkStats is the summary returned by the statistics endpoint.
type LinkStats struct {
	Code      string         `json:"code"`
	Total     int            `json:"total"`
	Daily     []DailyCount   `json:"daily"`
	Referrers map[string]int `json:"referrers"`
	LastClick *time.Time     `json:"last_click,omitempty"`
}

// CodeCount pairs a short code with a click count, used for rankings.
type CodeCount struct {
	Code   string `json:"code"`
	Clicks int    `json:"clicks"`
}

// linkCounters holds the raw counters for one code.
type linkCounters struct {
	total     int
	byDay     map[string]int
	referrers map[string]int
	lastClick time.Time
}

// ClickStats counts redirects per link, per day and per referrer host.
type ClickStats struct {
	mu    sync.Mutex
	links map[string]*linkCounters
}

// NewClickStats creates an empty statistics tracker.
func NewClickStats() *ClickStats {
	return &ClickStats{links: make(map[string]*linkCounters)}
}

// dayKey converts a timestamp to its UTC calendar day key.
func dayKey(t time.Time) string {
	return t.UTC().Format(dayLayout)
}

// referrerHost reduces a Referer header to its host name without "www.",
// using "direct" when the header is missing or unparsable.
func referrerHost(referer string) string {
	if referer == "" {
		return "direct"
	}
	u, err := url.Parse(referer)
	if err != nil || u.Host == "" {
		return "direct"
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}

// Record counts one click on a link at the given time from the given
// referrer, updating the total, the daily bucket and the referrer tally.
func (s *ClickStats) Record(code string, at time.Time, referer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.links[code]
	if !ok {
		c = &linkCounters{byDay: make(map[string]int), referrers: make(map[string]int)}
		s.links[code] = c
	}
	c.total++
	c.byDay[dayKey(at)]++
	host := referrerHost(referer)
	if _, seen := c.referrers[host]; !seen && len(c.referrers) >= maxReferrersPerLink {
		host = "other"
	}
	c.referrers[host]++
	if at.After(c.lastClick) {
		c.lastClick = at
	}
}

// Total returns the all-time click count for a link.
func (s *ClickStats) Total(code string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.links[code]; ok {
		return c.total
	}
	return 0
}

// DailySeries returns one entry per day from `from` to `to` inclusive,
// filling days without clicks with zero so charts have no gaps.
func (s *ClickStats) DailySeries(code string, from, to time.Time) []DailyCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.links[code]
	var series []DailyCount
	start := from.UTC().Truncate(24 * time.Hour)
	end := to.UTC().Truncate(24 * time.Hour)
	for day := start; !day.After(end); day = day.Add(24 * time.Hour) {
		key := day.Format(dayLayout)
		clicks := 0
		if c != nil {
			clicks = c.byDay[key]
		}
		series = append(series, DailyCount{Day: key, Clicks: clicks})
	}
	return series
}

// Summary builds the full statistics view for a link over the last `days`
// days, including a copy of the referrer counts.
func (s *ClickStats) Summary(code string, days int, now time.Time) LinkStats {
	series := s.DailySeries(code, now.AddDate(0, 0, -(days-1)), now)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := LinkStats{Code: code, Daily: series, Referrers: map[string]int{}}
	if c, ok := s.links[code]; ok {
		out.Total = c.total
		for host, n := range c.referrers {
			out.Referrers[host] = n
		}
		last := c.lastClick
		out.LastClick = &last
	}
	return out
}

// TopLinks returns the codes with the most clicks on a given day, highest
// first, breaking ties alphabetically.
func (s *ClickStats) TopLinks(day time.Time, limit int) []CodeCount {
	s.mu.Lock()
	key := dayKey(day)
	var ranked []CodeCount
	for code, c := range s.links {
		if n := c.byDay[key]; n > 0 {
			ranked = append(ranked, CodeCount{Code: code, Clicks: n})
		}
	}
	s.mu.Unlock()
	sort.Slice(ranked, func(i, j int) bool {
		if ranked[i].Clicks != ranked[j].Clicks {
			return ranked[i].Clicks > ranked[j].Clicks
		}
		return ranked[i].Code < ranked[j].Code
	})
	if len(ranked) > limit {
		ranked = ranked[:limit]
	}
	return ranked
}

// PruneBefore drops daily buckets older than the cutoff for every link,
// keeping totals intact, so memory stays bounded for long-lived links.
func (s *ClickStats) PruneBefore(cutoff time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	limit := dayKey(cutoff)
	removed := 0
	for _, c := range s.links {
		for key := range c.byDay {
			if key < limit {
				delete(c.byDay, key)
				removed++
			}
		}
	}
	return removed
}

// Forget removes all statistics for a link, used when the link is deleted.
func (s *ClickStats) Forget(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.links, code)
}
