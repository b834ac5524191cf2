// Hayloft web console (docs/console.md): polls GET /v1/console every 2 s and draws it.
// Read-only. Every string from the network goes into the page as text (textContent, attributes),
// never as markup.
'use strict';

(function () {
  const POLL_MS = 2000;
  const TOKEN_KEY = 'hayloft.console.adminToken';
  const STATE_ORDER = ['WRITABLE', 'READ_ONLY', 'ENCODING', 'ERASURE_CODED', 'DEGRADED', 'REPAIRING'];

  let timer = null;
  let busy = false;
  let lastOk = null;
  let memoryToken = null; // only when sessionStorage is unavailable

  const byId = (id) => document.getElementById(id);

  /** An element with attributes and children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) {
        continue;
      }
      if (k === 'class') {
        e.className = v;
      } else {
        e.setAttribute(k, String(v));
      }
    }
    for (const c of children) {
      if (c === null || c === undefined) {
        continue;
      }
      e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
    }
    return e;
  }

  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null;
    }
  }

  function bytes(n) {
    if (typeof n !== 'number' || !isFinite(n)) {
      return '–';
    }
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + ' ' + units[i];
  }

  function percent(x) {
    return typeof x === 'number' ? (100 * x).toFixed(1) + '%' : '–';
  }

  function bar(fraction, label, cls) {
    const f = Math.max(0, Math.min(1, typeof fraction === 'number' && isFinite(fraction) ? fraction : 0));
    const fill = el('span', { class: 'fill' + (cls ? ' ' + cls : '') });
    fill.style.width = (100 * f).toFixed(1) + '%';
    return el('span', { class: 'bar', title: label }, fill, el('span', { class: 'bar-label' }, label));
  }

  function badge(state) {
    return el('span', { class: 'badge state-' + String(state).toLowerCase().replace(/[^a-z_]/g, '') }, String(state));
  }

  // ------------------------------------------------------------------ banner and token

  function showError(message) {
    const b = byId('banner');
    b.textContent = message + (lastOk ? ' — showing data from ' + lastOk.toLocaleTimeString() : '');
    b.hidden = false;
    document.body.dataset.status = 'error';
    byId('data').classList.add('stale');
    byId('updated').textContent = lastOk ? 'last updated ' + lastOk.toLocaleTimeString() + ' (stale)' : 'not updated';
  }

  function askToken(why) {
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) {
      // no storage: the token is asked for again on each load
    }
    stopPolling();
    const data = byId('data');
    data.replaceChildren();
    data.hidden = true;
    byId('banner').hidden = true;
    byId('token-why').textContent = why;
    byId('token-form').hidden = false;
    byId('updated').textContent = 'waiting for the admin token';
    document.body.dataset.status = 'auth';
    byId('token-input').focus();
  }

  function onTokenSubmit(event) {
    event.preventDefault();
    const input = byId('token-input');
    const t = input.value.trim();
    if (!t) {
      return;
    }
    try {
      sessionStorage.setItem(TOKEN_KEY, t);
    } catch (e) {
      // sessionStorage unavailable: keep it for this page only
      memoryToken = t;
    }
    input.value = '';
    byId('token-form').hidden = true;
    startPolling();
  }

  // ------------------------------------------------------------------ polling

  async function refresh() {
    if (busy) {
      return;
    }
    busy = true;
    const token = storedToken() || memoryToken;
    const headers = { Accept: 'application/json' };
    if (token) {
      headers.Authorization = 'Bearer ' + token;
    }
    try {
      const res = await fetch('/v1/console', { headers: headers, cache: 'no-store', credentials: 'omit' });
      if (res.status === 401 || res.status === 403) {
        memoryToken = null;
        askToken(token ? 'The directory refused that token; enter it again.' : 'This directory needs its admin token to show the console.');
        return;
      }
      if (!res.ok) {
        let detail = '';
        try {
          const body = await res.json();
          detail = body && body.error ? ': ' + body.error.message : '';
        } catch (e) {
          // not JSON
        }
        showError('The directory answered HTTP ' + res.status + detail);
        return;
      }
      const data = await res.json();
      render(data);
      lastOk = new Date();
      byId('banner').hidden = true;
      byId('data').classList.remove('stale');
      byId('updated').textContent = 'last updated ' + lastOk.toLocaleTimeString();
      document.body.dataset.status = 'ok';
    } catch (e) {
      showError('The directory is unreachable (' + (e && e.message ? e.message : e) + ')');
    } finally {
      busy = false;
    }
  }

  function startPolling() {
    stopPolling();
    refresh();
    timer = setInterval(refresh, POLL_MS);
  }

  function stopPolling() {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }

  // ------------------------------------------------------------------ drawing

  function render(d) {
    byId('cluster').textContent = d.cluster ? 'cluster ' + d.cluster : '';
    const main = byId('data');
    const group = d.replicated && d.group ? groupSection(d.group) : null;
    if (d.replicated && d.leads === false) {
      // A follower: the group only; stores, volumes, raid-node and caches are on the leader's console.
      const where = d.leaderConsole
        ? el('p', { id: 'on-leader', class: 'summary' }, 'This replica is a follower. Stores, volumes, the raid-node and caches are on the leader\'s console: ',
          el('a', { href: d.leaderConsole, id: 'leader-link' }, d.leaderConsole))
        : el('p', { id: 'on-leader', class: 'unreachable' }, 'This replica is a follower and knows no leader: the group has no majority.'
          + ' Stores, volumes, the raid-node and caches are shown by the leader once there is one.');
      main.replaceChildren(group, where);
      main.hidden = false;
      return;
    }
    const states = {};
    for (const s of d.stores || []) {
      states[s.id] = s.state;
    }
    main.replaceChildren(
      group,
      storesSection(d.stores || []),
      el('div', { class: 'columns' },
        volumesSection(d, states),
        el('div', { class: 'side' }, raidSection(d.raid || {}), cachesSection(d.caches || []),
          bucketsSection(d.buckets || [], d.bucketCount || 0))));
    main.hidden = false;
  }

  function section(id, title, ...children) {
    return el('section', { id: id }, el('h2', null, title), ...children);
  }

  function table(headers, rows, attrs) {
    const head = el('tr', null, ...headers.map((h) => el('th', null, h)));
    return el('table', attrs, el('thead', null, head), el('tbody', null, ...rows));
  }

  function groupSection(g) {
    const rows = (g.replicas || []).map((r) => el('tr', { class: 'replica' + (r.role === 'UNREACHABLE' ? ' down' : ''),
      'data-replica-id': r.id, 'data-role': r.role },
      el('td', { class: 'mono' }, r.id + (r.id === g.self ? ' (this one)' : '')),
      el('td', { class: 'mono' }, r.http || '–'),
      el('td', null, badge(r.role)),
      el('td', { class: 'num' }, r.appliedIndex === null || r.appliedIndex === undefined ? '–' : String(r.appliedIndex))));
    return section('group-section', 'Directory group',
      el('p', { class: 'summary' }, g.leader ? 'leader ' + g.leader + ', term ' + g.term : 'no leader (term ' + g.term + ')'),
      table(['Replica', 'HTTP', 'Role', 'Applied index'], rows, { id: 'group' }));
  }

  function storesSection(stores) {
    const up = stores.filter((s) => s.state === 'UP').length;
    const rows = stores.map((s) => {
      const used = s.capacityBytes > 0 ? 1 - s.freeBytes / s.capacityBytes : 0;
      return el('tr', { class: 'store' + (s.state === 'UP' ? '' : ' down'), 'data-store-id': s.id, 'data-address': s.address, 'data-state': s.state },
        el('td', { class: 'mono' }, s.id),
        el('td', { class: 'mono' }, s.address),
        el('td', null, s.rack || '–'),
        el('td', null, badge(s.state)),
        el('td', null, bar(used, bytes(s.freeBytes) + ' free of ' + bytes(s.capacityBytes), used > 0.9 ? 'warn' : '')),
        el('td', { class: 'num' + (s.heartbeatAgeSeconds > 10 ? ' late' : '') }, s.heartbeatAgeSeconds + ' s'),
        // A store that is UP with no failures since may still carry the error of an old probe: shown muted.
        el('td', { class: s.state !== 'UP' || s.failures > 0 ? 'error-text' : 'error-text old' }, s.lastError || ''));
    });
    return section('stores-section', 'Stores',
      el('p', { class: 'summary' }, up + ' of ' + stores.length + ' up'),
      table(['Store', 'Address', 'Rack', 'State', 'Free / capacity', 'Heartbeat', 'Last error'], rows, { id: 'stores' }));
  }

  function replicaChip(id, states) {
    const state = states[id] || 'UNKNOWN';
    return el('span', { class: 'chip' + (state === 'UP' ? '' : ' down'), 'data-store': id, 'data-store-state': state, title: id + ': ' + state }, id);
  }

  function volumesSection(d, states) {
    const counts = d.volumeCounts || {};
    const volumes = d.volumes || [];
    const summary = el('p', { class: 'summary' });
    const groups = [];
    const order = STATE_ORDER.concat(Object.keys(counts).filter((s) => !STATE_ORDER.includes(s)));
    for (const state of order) {
      const n = counts[state] || 0;
      if (n === 0) {
        continue;
      }
      summary.append(badge(state), ' ' + n + '  ');
      const listed = volumes.filter((v) => v.state === state);
      const items = listed.map((v) => volume(v, states));
      const note = listed.length < n ? el('p', { class: 'muted' }, 'showing ' + listed.length + ' of ' + n) : null;
      groups.push(el('div', { class: 'volume-group', 'data-state': state },
        el('h3', null, badge(state), ' ' + n + (n === 1 ? ' volume' : ' volumes')), note, ...items));
    }
    if (groups.length === 0) {
      summary.append('no volumes yet');
    }
    return section('volumes-section', 'Volumes', summary, ...groups);
  }

  function volume(v, states) {
    const head = el('div', { class: 'volume-head' },
      el('span', { class: 'volume-id' }, 'volume ' + v.id),
      bar(v.limitBytes > 0 ? v.sizeBytes / v.limitBytes : 0, bytes(v.sizeBytes) + ' of ' + bytes(v.limitBytes)),
      v.replicas && v.replicas.length
        ? el('span', { class: 'replicas' }, 'replicas ', ...v.replicas.map((r) => replicaChip(r, states)))
        : el('span', { class: 'muted' }, 'no replicas'),
      v.reason ? el('span', { class: 'reason muted' }, v.reason) : null);
    const box = el('div', { class: 'volume', 'data-volume-id': v.id, 'data-state': v.state }, head);
    if (v.coding) {
      box.append(stripes(v.coding, states));
    }
    return box;
  }

  function stripes(c, states) {
    const k = c.k;
    const units = [];
    const n = c.stripes.length ? c.stripes[0].length : 0;
    for (let u = 0; u < n; u++) {
      units.push(u < k ? 'd' + u : 'p' + (u - k));
    }
    const rows = c.stripes.map((blocks, i) => el('tr', null, el('th', null, 'stripe ' + i),
      ...blocks.map((store, u) => {
        const state = states[store] || 'UNKNOWN';
        const down = state !== 'UP';
        return el('td', { class: 'block' + (u < k ? ' data' : ' parity') + (down ? ' down' : ''), 'data-store': store,
          'data-store-state': state, 'data-down': down ? 'true' : null, title: store + ': ' + state }, store);
      })));
    const caption = el('caption', null, c.codec + ' (' + c.k + ',' + c.r + '), ' + c.stripes.length
      + (c.stripes.length === 1 ? ' stripe' : ' stripes') + (c.status !== 'COMMITTED' ? ', ' + c.status : '')
      + (c.blocksOnDownStores > 0 ? ', ' + c.blocksOnDownStores + ' blocks on stores not up' : ''));
    const t = el('table', { class: 'stripes' }, caption,
      el('thead', null, el('tr', null, el('th', null, ''), ...units.map((u) => el('th', null, u)))),
      el('tbody', null, ...rows));
    return el('div', { class: 'stripe-scroll' }, t);
  }

  function raidSection(r) {
    if (!r.configured) {
      return section('raid-section', 'Raid-node',
        el('p', { id: 'raid', class: 'muted', 'data-reachable': 'unconfigured' },
          'No raid-node configured: set raidNode (host:port) in the directory\'s configuration.'));
    }
    if (!r.reachable) {
      return section('raid-section', 'Raid-node',
        el('p', { id: 'raid', class: 'unreachable', 'data-reachable': 'false' },
          'raid-node ' + r.address + ' unreachable: ' + (r.error || 'no answer')));
    }
    const s = r.status || {};
    const stripes = s.stripes || {};
    const repair = s.repair || {};
    const facts = el('dl', { class: 'facts' },
      ...fact('address', r.address),
      ...fact('lease', s.lease ? s.lease.holder + ' (epoch ' + s.lease.epoch + ')' : '–'),
      ...fact('passes', String(s.passes ?? '–')),
      ...fact('stripes', (stripes.healthy ?? 0) + ' healthy, ' + (stripes.damaged ?? 0) + ' damaged, ' + (stripes.planned ?? 0) + ' planned'),
      ...fact('blocks', (s.blocksMissing ?? 0) + ' missing, ' + (s.blocksCorrupt ?? 0) + ' corrupt'),
      ...fact('encode backlog', (s.backlog || []).length + ' volumes'),
      ...fact('repair', (repair.blocksRebuilt ?? 0) + ' blocks rebuilt, ' + bytes(repair.rateBytesPerSecond) + '/s over '
        + (repair.windowSeconds ?? '–') + ' s'));
    const parts = [facts];
    if (s.policy && s.policy.lastError) {
      parts.push(el('p', { class: 'error-text' }, 'policy file refused: ' + s.policy.lastError));
    }
    const jobs = s.jobs || [];
    if (jobs.length) {
      parts.push(el('h3', null, 'Running jobs'), table(['Job', 'Volume', 'Step', 'Progress'], jobs.map((j) =>
        el('tr', { class: 'job' }, el('td', null, j.kind), el('td', null, j.volume ?? '–'), el('td', null, j.step || ''),
          el('td', null, bar(j.bytesTotal > 0 ? j.bytesDone / j.bytesTotal : 0, bytes(j.bytesDone) + ' of ' + bytes(j.bytesTotal)))))));
    }
    const damaged = s.damaged || [];
    parts.push(el('h3', null, 'Damaged stripes (' + (s.damagedTotal ?? damaged.length) + ')'));
    if (damaged.length) {
      parts.push(table(['Volume', 'Stripe', 'Units', 'Why'], damaged.map((x) =>
        el('tr', { class: 'damaged', 'data-volume-id': x.volume, 'data-stripe': x.stripe },
          el('td', null, x.volume), el('td', null, x.stripe), el('td', null, (x.units || []).join(', ')),
          el('td', null, x.why || '')))));
    } else {
      parts.push(el('p', { class: 'muted' }, 'none as of the last pass'));
    }
    return section('raid-section', 'Raid-node', el('div', { id: 'raid', 'data-reachable': 'true' }, ...parts));
  }

  function fact(name, value) {
    return [el('dt', null, name), el('dd', null, value)];
  }

  function cachesSection(caches) {
    if (!caches.length) {
      return section('caches-section', 'Caches', el('p', { class: 'muted' }, 'No cache nodes configured (cacheNodes, gutterNodes).'));
    }
    const rows = caches.map((c) => el('tr', { class: 'cache' + (c.reachable ? '' : ' down'), 'data-address': c.address,
      'data-reachable': c.reachable ? 'true' : 'false' },
      el('td', null, el('span', { class: 'mono' }, c.address), el('span', { class: 'role' }, c.role)),
      ...(c.reachable
        ? [el('td', null, bar(c.hitRate, percent(c.hitRate), 'good')),
          el('td', { class: 'num' }, c.hits + ' / ' + c.misses),
          el('td', { class: 'num', title: c.entries + ' entries' }, bytes(c.bytes))]
        : [el('td', { class: 'unreachable', colspan: 3 }, 'unreachable: ' + (c.error || 'no answer'))])));
    return section('caches-section', 'Caches', table(['Node', 'Hit rate', 'Hits / misses', 'Cached'], rows, { id: 'caches' }));
  }

  function bucketsSection(buckets, total) {
    if (!buckets.length) {
      return section('buckets-section', 'S3 buckets', el('p', { class: 'muted' }, 'No buckets (the S3 gateway: docs/s3.md).'));
    }
    const rows = buckets.map((b) => el('tr', { class: 'bucket', 'data-bucket': b.name, 'data-objects': String(b.objects),
      'data-bytes': String(b.bytes) },
      el('td', { class: 'mono' }, b.name),
      el('td', { class: 'num' }, String(b.objects)),
      el('td', { class: 'num', title: b.bytes + ' bytes' }, bytes(b.bytes)),
      el('td', { class: 'num' }, String(b.uploads))));
    const more = total > buckets.length ? [el('p', { class: 'muted' }, (total - buckets.length) + ' more not listed')] : [];
    return section('buckets-section', 'S3 buckets',
      el('p', { class: 'summary' }, total + (total === 1 ? ' bucket' : ' buckets')),
      table(['Bucket', 'Objects', 'Bytes', 'Uploads'], rows, { id: 'buckets' }), ...more);
  }

  document.addEventListener('DOMContentLoaded', () => {
    byId('token-form').addEventListener('submit', onTokenSubmit);
    startPolling();
  });
})();
