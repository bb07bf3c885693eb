# node with worker threads.
. "$(dirname "$0")/lib.sh"
need node
cat >"$WS/w.js" <<'JS'
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
if (isMainThread) {
  const jobs = [1, 2, 3, 4].map(n => new Promise((resolve, reject) => {
    const w = new Worker(__filename, { workerData: n });
    w.on('message', resolve); w.on('error', reject);
  }));
  Promise.all(jobs).then(r => console.log('workers', r.join(',')));
} else {
  let s = 0; for (let i = 0; i <= workerData * 1000; i++) s += i;
  parentPort.postMessage(s);
}
JS
run_in --timeout 60 -- node w.js
expect_eq "$RC" 0 "node: $ERR"
expect_eq "$OUT" "workers 500500,2001000,4501500,8002000" "the workers' results"
expect_eq "$(report_get 'r["violations"]')" "[]" "violations"
