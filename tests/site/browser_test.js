// The site in a real browser: Debian's chromium, driven by playwright-core (from the site tools
// folder, `scripts/setup --site`), over a site that tests/integration/site_test.cpp built from
// real run directories. Run by that test as `node browser_test.js CASES.json`; exits non-zero on
// any failure, printing each. Checks: no console error and no request outside the site (every
// request is intercepted); sorting and filtering change the rows; a cell opens its run page; a
// tool call expands; diffs are visible; the solution is highlighted; an annotation's quote links to
// its lines; hostile text stays text; bad runs are marked; the pages pass html-validate and
// axe-core's WCAG 2 A/AA rules. Screenshots go to the artefacts folder. The 20 MB transcript's
// time to first events is printed, not asserted (CI machines are too noisy for a timing bound).
'use strict';
const fs = require('fs');
const path = require('path');

const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const mod = (name) => require(path.join(cases.tools, 'node_modules', name));
const { chromium } = mod('playwright-core');
const { HtmlValidate } = mod('html-validate');
const axeSource = fs.readFileSync(path.join(cases.tools, 'node_modules/axe-core/axe.min.js'), 'utf8');

const failures = [];
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failures.push(what);
}
const siteUrl = 'file://' + path.resolve(cases.site) + '/';
const url = (file) => 'file://' + path.resolve(file);

(async () => {
  const browser = await chromium.launch({ executablePath: cases.chromium, args: ['--no-sandbox'] });
  const context = await browser.newContext({ viewport: { width: 1300, height: 900 } });
  const outside = [], consoleErrors = [], dialogs = [];
  // Every request the pages make: anything outside the site is recorded and refused.
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(siteUrl)) return route.continue();
    outside.push(u);
    return route.abort();
  });
  context.on('page', () => {});
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(page.url() + ': ' + m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(page.url() + ': ' + e.message));
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });

  async function axe(label) {
    // preload: false keeps axe from fetching the style sheets itself (XHR, refused on file://).
    await page.addScriptTag({ content: axeSource });
    const r = await page.evaluate(() => window.axe.run(document, { preload: false, runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } }));
    const v = r.violations.map((x) => x.id + ' (' + x.nodes.length + '): ' + x.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', '));
    check(v.length === 0, 'axe-core WCAG 2 A/AA on ' + label + (v.length ? ': ' + v.join('; ') : ''));
  }

  // ---- the leaderboard
  await page.goto(siteUrl + 'index.html');
  await page.waitForLoadState('load');
  const board = page.locator('table.board').first();
  const names = () => board.locator('tbody th[scope=row]').allTextContents();
  const before = await names();
  check(before.length >= 3, 'the leaderboard lists the entrants (' + before.length + ')');
  await board.locator('thead button.sort').first().click();
  const asc = await names();
  await board.locator('thead button.sort').first().click();
  const desc = await names();
  check(JSON.stringify(asc) === JSON.stringify([...before].sort((a, b) => a.toLowerCase() < b.toLowerCase() ? -1 : 1)), 'sorting by entrant orders the rows');
  check(JSON.stringify(desc) === JSON.stringify([...asc].reverse()), 'sorting again reverses them');
  await page.selectOption('#filter-agent', 'kbench');
  const shown = await board.locator('tbody tr:not([hidden])').count();
  const all = await board.locator('tbody tr').count();
  check(shown > 0 && shown < all, 'filtering by harness hides the other rows (' + shown + ' of ' + all + ')');
  await page.selectOption('#filter-agent', '');
  check((await board.locator('tbody tr:not([hidden])').count()) === all, 'clearing the filter shows every row');
  const flagged = await board.locator('td.flagged .flag-reward_hack').count();
  check(flagged >= 1, 'the reward-hack cell carries its red badge');
  await page.screenshot({ path: path.join(cases.artefacts, 'leaderboard.png'), fullPage: false });
  await axe('the leaderboard');

  // A cell opens its run page.
  await board.locator('tbody tr', { hasText: 'generic/scripted' }).locator('td.cell a').first().click();
  await page.waitForLoadState('load');
  check(/\/runs\/.+\/index\.html$/.test(page.url()), 'clicking a cell opens its run page (' + page.url() + ')');
  check((await page.locator('h1').textContent()).includes('generic/scripted'), 'the run page names its entrant');

  // ---- a run page: kbench's own loop
  await page.goto(url(cases.pages.loop));
  await page.waitForSelector('#timeline .chunk.loaded');
  const call = page.locator('#timeline details.call').first();
  await call.locator('summary').click();
  await call.locator('.call-body').waitFor({ timeout: 5000 }).catch(() => {});
  check(await call.locator('.call-body').isVisible(), 'a tool call expands to its arguments and result');
  check(await page.locator('#timeline .diff .add').first().isVisible(), 'the file the agent wrote is shown as a diff');
  check((await page.locator('#timeline .kb-pass').count()) >= 1, 'the kbench check/submit call shows its pass');
  await page.click('#tab-solution');
  check(await page.locator('#panel-solution .source.highlighted .hljs-keyword').first().isVisible(), 'the solution tab shows highlighted code');
  await page.click('#tab-timeline');
  await page.screenshot({ path: path.join(cases.artefacts, 'run.png'), fullPage: false });
  await axe('a run page');

  // Every agent's run page renders its transcript with the file it wrote and its check.
  for (const [agent, file] of Object.entries(cases.agent_pages || {})) {
    await page.goto(url(file));
    await page.waitForSelector('#timeline .chunk.loaded');
    const n = await page.locator('#timeline .ev').count();
    const diffs = await page.locator('#timeline .diff').count();
    check(n > 0 && diffs > 0, agent + ': ' + n + ' timeline items, ' + diffs + ' diff(s)');
  }

  // ---- the annotation's quote links to its lines
  await page.goto(url(cases.pages.annotated));
  await page.click('#tab-annotation');
  const quote = page.locator('a.quote-link').first();
  const href = await quote.getAttribute('href');
  await quote.click();
  const target = page.locator(href);
  await target.waitFor({ timeout: 5000 }).catch(() => {});
  check(await target.isVisible(), 'the quote link shows its line (' + href + ')');
  check((await target.getAttribute('class')).includes('hl'), 'the quoted line is highlighted');
  check((await page.locator('#panel-solution .line.hl').count()) === 2, 'both quoted lines are highlighted');

  // ---- hostile and broken runs
  await page.goto(url(cases.pages.hostile));
  await page.waitForSelector('#timeline .chunk.loaded');
  const body = await page.locator('#timeline').textContent();
  check(body.includes("<script>alert('xss')</script>"), 'hostile HTML in a transcript is shown as text');
  check(body.includes('\u241b[31mred'), 'terminal escapes are shown as visible symbols');
  check((await page.locator('#timeline .mark').count()) >= 2, 'changed text is marked (control characters, invalid UTF-8)');
  check((await page.locator('#timeline .ev-unknown').count()) === 1, 'an unknown event kind is shown, marked');
  check((await page.locator('#timeline .ev-unreadable').count()) === 1, 'a line that is not JSON is shown, marked');
  check((await page.locator('#timeline script, #timeline img').count()) === 0, 'no markup from the transcript entered the page');
  for (const [k, text] of [['truncated', 'truncated'], ['unknown', 'unknown adapter'], ['missing', 'result.json is missing']]) {
    await page.goto(url(cases.pages[k]));
    check((await page.locator('.banner', { hasText: text }).count()) >= 1, 'the ' + k + ' run is marked: "' + text + '"');
  }

  // ---- a 20 MB transcript: time until its first events are on screen (printed, not asserted)
  const t0 = Date.now();
  await page.goto(url(cases.pages.big));
  await page.waitForSelector('#timeline .chunk.loaded .ev');
  const firstShown = Date.now() - t0;
  const nav = await page.evaluate(() => performance.getEntriesByType('navigation')[0].toJSON());
  console.log('20 MB transcript: first events shown after ' + firstShown + ' ms (DOMContentLoaded ' +
              Math.round(nav.domContentLoadedEventEnd) + ' ms, load ' + Math.round(nav.loadEventEnd) + ' ms)');
  check(firstShown < 10000, '20 MB transcript opens (under the 10 s sanity bound; the figure above is the measurement)');
  await page.mouse.wheel(0, 40000);
  await page.waitForFunction(() => document.querySelectorAll('#timeline .chunk.loaded').length > 1);
  check(true, 'scrolling loads further parts of the timeline');

  check(consoleErrors.length === 0, 'no console errors' + (consoleErrors.length ? ': ' + consoleErrors.slice(0, 5).join(' | ') : ''));
  check(outside.length === 0, 'no request outside the site' + (outside.length ? ': ' + outside.slice(0, 5).join(' ') : ''));
  check(dialogs.length === 0, 'no script from a run ran (no dialogs)');
  await browser.close();

  // ---- every page's HTML, as written by kbench
  const hv = new HtmlValidate({ extends: ['html-validate:recommended'] });
  const pages = [path.join(cases.site, 'index.html')];
  for (const d of ['problems']) for (const f of fs.readdirSync(path.join(cases.site, d))) pages.push(path.join(cases.site, d, f));
  for (const f of Object.values(cases.pages)) pages.push(f);
  let problems = [];
  for (const p of pages) {
    const r = await hv.validateString(fs.readFileSync(p, 'utf8'), p);
    for (const res of r.results) for (const m of res.messages) problems.push(path.relative(cases.site, p) + ':' + m.line + ':' + m.column + ' ' + m.ruleId + ' ' + m.message);
  }
  check(problems.length === 0, 'html-validate passes ' + pages.length + ' pages' + (problems.length ? ':\n  ' + problems.slice(0, 20).join('\n  ') : ''));

  console.log(failures.length ? failures.length + ' browser check(s) failed' : 'all browser checks passed');
  process.exit(failures.length ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
