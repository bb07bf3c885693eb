// A TypeScript host of the package, type-checked by the tests (tsc
// --strict): the declarations must describe what index.js returns.
import * as cordon from '../..';
import type { Report, ReportLevel } from '../../report';

async function main(): Promise<number> {
  const caps: cordon.Capabilities = cordon.probe();
  if (!caps.available) return 1;
  const plan: cordon.Plan = cordon.compile('workspace-write', { workspace: '/srv/project', sandbox: 'require' });
  const explained = plan.explain();
  const write: ReportLevel = explained.controls.filesystem_write.level;
  const result: cordon.RunResult = await cordon.run(plan, ['make', 'test'], {
    timeout: 30,
    onStdout: (chunk: Buffer) => process.stdout.write(chunk),
  });
  const report: Report = result.report;
  const outcome: 'completed' | 'timed_out' | 'interrupted' | 'cancelled' | 'refused' | 'launch_failed' = report.outcome;
  const exit = report.exit && 'code' in report.exit ? report.exit.code : -1;
  const run = cordon.start('read-only', ['cat'], { stdin: 'pipe', signal: new AbortController().signal });
  run.stdin?.end('data');
  run.cancel();
  const ended = await run.wait();
  const pool = new cordon.Pool('workspace-write', { workspace: '/srv/project', size: 4, maxAge: 10 });
  const pooled: cordon.RunResult = await pool.run(['git', 'status'], { timeout: 5 });
  const ready: number = pool.ready;
  const changed: boolean = pool.refresh();
  pool.close();
  console.log(pooled.report.prepared, ready, changed);
  try {
    cordon.compile({ schema_version: 1 });
  } catch (e) {
    if (e instanceof cordon.CordonError) {
      for (const b of e.blockers) console.log(b.subject, b.control, b.required, b.available, b.reason);
      console.log(e.code, e.location, e.errors.map((x) => x.location));
    }
  }
  const refused = cordon.explain('workspace-write', { sandbox: 'forbid' });
  if (!refused.compiles) console.log(refused.error.code, refused.error.blockers.length);
  const rules = new cordon.Rules({ schema_version: 1, name: 'agent', rules: [] });
  const ledger = new cordon.Ledger();
  const tool: cordon.ToolResult = await cordon.toolCall(rules, { schema_version: 1, action: 'shell', command: 'ls' }, {
    workspace: '/srv/project', timeout: 30, maxOutput: 65536, ledger, pool, stdin: 'input',
    extraEnv: { CI: '1', NAME: Buffer.from([0x66, 0xff]) },
    approver: async (shown: cordon.ApprovalRequest) => shown.request_digest ? cordon.approve('ok', 'session') : cordon.deny('no'),
    onOutput: (stream: 1 | 2, chunk: Buffer) => console.log(stream, chunk.length),
  });
  const kept: Buffer = tool.stdout.data;
  console.log(tool.status, tool.exitCode, tool.stdout.dropped, tool.warnings, kept.length, tool.approval?.scope);
  const files = await cordon.FsWorker.start('/srv/project', 'workspace-write', { deadlineMs: 5000 });
  const content: string = await files.read('README.md');
  const replaced: number = await files.edit('README.md', 'a', 'b');
  const closed = await files.close();
  console.log(content, replaced, closed.run.outcome, (await files.glob('**/*.js')).length);
  console.log(write, outcome, exit, ended.cancelled, result.exitCode, cordon.libraryVersion());
  return result.exitCode;
}

declare const process: { stdout: { write(chunk: Buffer): boolean } };
main();
