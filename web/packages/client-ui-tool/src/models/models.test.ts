import { describe, expect, test } from 'vitest';
import { callOf, callsOf, findCall, inputAt } from '../../../../test-support/calls';
import { malformedFixtures, recordedFixtures } from '../../../../test-support/fixtures';
import { shortenPath } from '../paths';
import { callState, isAutoReviewDenied, type CardInput } from './common';
import { deniedModel, normaliseReason } from './denied';
import { editModel, editorModel, preparingSize, touchedLines, writeModel } from './diff';
import { genericModel } from './generic';
import { imageModel } from './image';
import { interruptModel, jobOutputModel } from './job';
import { questionModel } from './question';
import { readModel } from './read';
import { runCodeModel } from './runCode';
import { globModel, grepModel } from './search';
import { shellModel } from './shell';
import { programCapsule, terminalListModel, terminalModel, typedLine } from './terminal';
import { tableQueryModel } from './table';
import { compareTodos, todoModel } from './todo';
import { webModel } from './web';

const MODELS = {
  bash: shellModel,
  job_output: jobOutputModel,
  job_kill: interruptModel,
  terminal_start: terminalModel,
  terminal_send: terminalModel,
  terminal_kill: interruptModel,
  terminal_list: terminalListModel,
  table_query: tableQueryModel,
  read: readModel,
  read_image: imageModel,
  write: writeModel,
  edit: editModel,
  str_replace_editor: editorModel,
  grep: grepModel,
  glob: globModel,
  web_fetch: webModel,
  todo_write: (input: CardInput) => todoModel(input),
  question: questionModel,
  run_code: runCodeModel,
} as const;

describe('every model, every recorded call, every phase', () => {
  test.each([...recordedFixtures(), ...malformedFixtures()])('%s', (fixture) => {
    for (const node of callsOf(fixture)) {
      const model = MODELS[node.toolName as keyof typeof MODELS];
      if (model === undefined) continue;
      const phases =
        node.phase === 'done'
          ? (['preparing', 'start', 'result'] as const)
          : (['preparing'] as const);
      for (const phase of phases) {
        const built = model(inputAt(node, phase));
        const frozen = callState(inputAt(node, phase));
        // A receipt is a call that ended `ok` and whose card shows no execution state.
        expect(built.state, `${fixture} ${node.callId} ${phase}`).toBe(
          built.state === 'receipt' && frozen === 'ok' ? 'receipt' : frozen,
        );
        if (phase === 'preparing') expect(JSON.stringify(built)).not.toContain('"input"');
      }
    }
  });
});

describe('states come from the frozen data only', () => {
  test('interrupted is never an error, denied never an error', () => {
    expect(callState(inputAt(callOf('interrupts', 'call_1')))).toBe('interrupted');
    expect(callState(inputAt(callOf('interrupts', 'call_2')))).toBe('interrupted');
    expect(callState(inputAt(callOf('interrupted-preparing', 'call_1')))).toBe('interrupted');
    expect(callState(inputAt(callOf('review', 'call_1')))).toBe('denied');
    expect(callState(inputAt(callOf('timeouts', 'call_1')))).toBe('error');
    expect(callState(inputAt(callOf('shell', 'call_1'), 'start'))).toBe('running');
  });

  test('a status from a newer runtime shows as a failure, never as success', () => {
    expect(callState(inputAt(callOf('malformed/unknown-fields', 'call_2')))).toBe('error');
  });
});

describe('shell', () => {
  const shell = (fixture: string, callId: string, phase: 'start' | 'result' = 'result') =>
    shellModel(inputAt(callOf(fixture, callId), phase));

  test('a running command shows its live output in a terminal', () => {
    const model = shell('interrupts', 'call_1', 'start');
    expect(model).toMatchObject({
      kind: 'shell',
      state: 'running',
      body: { kind: 'terminal', output: 'started\n' },
    });
    expect(model).not.toHaveProperty('capsule');
  });

  test('a running command whose live output was cut shows the gap and the latest output', () => {
    const input = {
      ...inputAt(callOf('interrupts', 'call_1'), 'start'),
      progressGap: { omittedBytes: 1_000_000, tail: 'latest\n' },
    };
    expect(shellModel(input)).toMatchObject({
      body: {
        kind: 'terminal',
        output: 'started\n',
        gap: { omittedBytes: 1_000_000, tail: 'latest\n' },
      },
    });
    expect(genericModel(input)).toMatchObject({
      progress: 'started\n',
      progressGap: { omittedBytes: 1_000_000, tail: 'latest\n' },
    });
  });

  test('success: the terminal and no capsule', () => {
    expect(shell('shell', 'call_1')).toMatchObject({
      state: 'ok',
      summary: "printf 'compiling report\\n'; echo done",
      body: { kind: 'terminal', output: 'compiling report\ndone\n' },
    });
    expect(shell('shell', 'call_1')).not.toHaveProperty('capsule');
  });

  test('a non-zero exit, a signal or a timeout gets the capsule', () => {
    expect(shell('shell', 'call_2')).toMatchObject({
      capsule: { key: 'shell.exitCode', values: { code: 1 } },
    });
    expect(shell('shell', 'call_3')).toMatchObject({
      capsule: { key: 'shell.signal', values: { signal: 'SIGTERM' } },
    });
    expect(shell('shell', 'call_4')).toMatchObject({ capsule: { key: 'shell.timedOut' } });
  });

  test('a command with no exit code at all gets the capsule', () => {
    const node = callOf('shell', 'call_1');
    const output = { ...(node.outcome?.output as object), exit_code: null, signal: null };
    const input = {
      ...inputAt(node),
      result: { ...(node.outcome as NonNullable<typeof node.outcome>), output },
    };
    expect(shellModel(input)).toMatchObject({ capsule: { key: 'shell.noExitCode' } });
  });

  test('an output ending with the spill notice shows the plain text the model saw', () => {
    const model = shell('shell', 'call_5');
    expect(model).toMatchObject({ kind: 'shell', body: { kind: 'plain' } });
    if (model.kind !== 'shell' || model.body?.kind !== 'plain')
      throw new Error('plain body expected');
    expect(model.body.output).toContain('[qilin: output cut; all ');
    expect(model.body).not.toHaveProperty('input');
  });

  test('a background start is a static receipt: command and folder, never status', () => {
    const model = shell('shell', 'call_8');
    expect(model).toEqual({
      kind: 'shell',
      state: 'receipt',
      summary: 'for i in 1 2 3; do echo tick $i; sleep 0.1; done',
      background: true,
      body: {
        kind: 'receipt',
        command: 'for i in 1 2 3; do echo tick $i; sleep 0.1; done',
        cwd: '.',
      },
    });
    expect(shell('shell', 'call_8', 'start')).toMatchObject({
      background: true,
      body: { kind: 'terminal' },
    });
  });

  test('failures keep the command and show the plain error', () => {
    expect(shell('shell', 'call_6')).toMatchObject({ kind: 'generic' });
    expect(shell('timeouts', 'call_1')).toMatchObject({
      state: 'error',
      body: { kind: 'plain', output: expect.stringContaining('1 s limit') },
    });
    expect(shell('interrupts', 'call_3.2')).toMatchObject({
      state: 'interrupted',
      body: { kind: 'plain' },
    });
  });

  test('pwsh uses the same card by name; malformed data falls back', () => {
    const node = callOf('shell', 'call_2');
    expect(shellModel({ ...inputAt(node), toolName: 'pwsh' })).toMatchObject({ kind: 'shell' });
    expect(shellModel(inputAt(callOf('malformed/non-json-arguments', 'call_2')))).toMatchObject({
      kind: 'generic',
    });
    const odd = {
      status: 'ok' as const,
      content: [],
      durationMs: 0,
      output: { kind: 'finished', output: 17, exit_code: 'zero' },
    };
    expect(shellModel({ ...inputAt(node), result: odd })).toMatchObject({ kind: 'generic' });
  });
});

describe('the shell family', () => {
  test('a persistent call is the terminal while it runs and generic once ended', () => {
    expect(shellModel(inputAt(callOf('terminals', 'call_1'), 'start'))).toMatchObject({
      kind: 'shell',
      persistentShell: 'default',
      body: { kind: 'terminal' },
    });
    for (const callId of ['call_1', 'call_2', 'call_3', 'call_4', 'call_5']) {
      const model = shellModel(inputAt(callOf('terminals', callId)));
      expect(model, callId).toMatchObject({ kind: 'generic', toolName: 'bash' });
      expect(model, callId).not.toHaveProperty('capsule');
    }
  });

  test('what was typed reads as one line', () => {
    expect(typedLine('answer = 6 * 7', ['Enter'])).toBe('answer = 6 * 7 ⏎');
    expect(typedLine(undefined, ['Ctrl-C'])).toBe('Ctrl-C');
    expect(typedLine('', [])).toBe('');
  });

  test('a program’s capsule: a bad exit or a signal, never while it runs', () => {
    expect(programCapsule('running', null, undefined)).toBeUndefined();
    expect(programCapsule('exited', 0, undefined)).toBeUndefined();
    expect(programCapsule('exited', 2, undefined)).toEqual({
      key: 'shell.exitCode',
      values: { code: 2 },
    });
    expect(programCapsule('killed', null, 'SIGKILL')).toEqual({
      key: 'shell.signal',
      values: { signal: 'SIGKILL' },
    });
  });

  test('terminal_send: the report must name the terminal the call typed into', () => {
    const node = callOf('terminals', 'call_7');
    expect(terminalModel(inputAt(node))).toMatchObject({
      kind: 'terminal',
      terminalId: 'term-1',
      summary: 'hello ⏎',
      body: { kind: 'terminal', typed: 'hello ⏎', waitMissed: false },
    });
    const other = {
      ...inputAt(node),
      result: {
        ...(node.outcome as NonNullable<typeof node.outcome>),
        output: { ...(node.outcome?.output as object), terminal_id: 'term-2' },
      },
    };
    expect(terminalModel(other)).toMatchObject({ kind: 'generic' });
  });

  test('an interrupt receipt holds the target and the confirmation, nothing of the exit', () => {
    const model = interruptModel(inputAt(callOf('shell', 'call_11')));
    expect(model).toEqual({
      kind: 'interrupt',
      state: 'receipt',
      target: 'job-2',
      confirmation: { key: 'interrupt.requested', values: { target: 'job-2' } },
    });
    expect(interruptModel(inputAt(callOf('shell', 'call_11'), 'start'))).toEqual({
      kind: 'interrupt',
      state: 'running',
      target: 'job-2',
    });
  });

  test('job_output: the job’s state and output; a report for another job is generic', () => {
    const node = callOf('shell', 'call_9');
    expect(jobOutputModel(inputAt(node))).toMatchObject({
      kind: 'jobOutput',
      state: 'receipt',
      jobId: 'job-1',
      jobState: { key: 'job.exited', values: { code: 0 } },
      jobDot: 'ok',
      body: { kind: 'job', output: 'tick 1\ntick 2\ntick 3\n' },
    });
    expect(jobOutputModel(inputAt(node, 'start'))).toEqual({
      kind: 'jobOutput',
      state: 'running',
      jobId: 'job-1',
    });
    const other = {
      ...inputAt(node),
      result: {
        ...(node.outcome as NonNullable<typeof node.outcome>),
        output: { ...(node.outcome?.output as object), job_id: 'job-7' },
      },
    };
    expect(jobOutputModel(other)).toMatchObject({ kind: 'generic' });
  });
});

describe('read and images', () => {
  test('a read shows its lines with their numbers and which part of the file', () => {
    expect(readModel(inputAt(callOf('files', 'call_2')))).toMatchObject({
      kind: 'read',
      path: 'src/report.py',
      suffix: { key: 'excerpt.lines', values: { first: 6, last: 9, total: 13 } },
      body: {
        kind: 'excerpt',
        firstLine: 6,
        lines: ['def totals(path):', expect.any(String), expect.any(String), expect.any(String)],
      },
    });
    expect(readModel(inputAt(callOf('files', 'call_3')))).toMatchObject({
      state: 'error',
      body: { kind: 'plain' },
    });
  });

  test('an image read becomes the workspace file, with the recorded bytes as its fallback', () => {
    const model = imageModel(inputAt(callOf('files', 'call_16')));
    expect(model).toMatchObject({
      kind: 'image',
      images: [
        {
          source: { kind: 'file', path: expect.stringMatching(/\.png$/) },
          fallback: { kind: 'inline', mediaType: 'image/png' },
          width: 12,
          height: 12,
        },
      ],
    });
    const nested = imageModel(inputAt(findCall('code-mode', 'read_image')));
    expect(nested).toMatchObject({ kind: 'image', images: [{ width: 12 }] });
    expect(imageModel(inputAt(callOf('files', 'call_17')))).toMatchObject({
      state: 'error',
      body: { kind: 'plain' },
    });
  });
});

describe('write, edit and the editor', () => {
  test('"Preparing content N KB" counts the raw argument text', () => {
    expect(preparingSize('')).toBe(0);
    expect(preparingSize('x')).toBe(1);
    expect(preparingSize('x'.repeat(1024))).toBe(1);
    expect(preparingSize('x'.repeat(1025))).toBe(2);
    expect(writeModel(inputAt(callOf('files', 'call_5'), 'preparing'))).toEqual({
      kind: 'diff',
      state: 'preparing',
      title: { key: 'tool.write.title' },
    });
  });

  test('a created file has exact counts; a replaced or running one coarse counts', () => {
    expect(writeModel(inputAt(callOf('files', 'call_5')))).toMatchObject({
      stats: { kind: 'exact', added: 4, removed: 0 },
      body: { kind: 'diff', note: { key: 'diff.newFile' } },
    });
    expect(writeModel(inputAt(callOf('files', 'call_6')))).toMatchObject({
      stats: { kind: 'coarse', lines: 5 },
    });
    expect(writeModel(inputAt(callOf('files', 'call_6'), 'start'))).toMatchObject({
      stats: { kind: 'coarse', lines: 5 },
    });
  });

  test('an edit shows the text diff while running and the recorded diff once done', () => {
    const running = editModel(inputAt(callOf('files', 'call_7'), 'start'));
    expect(running).toMatchObject({
      stats: { kind: 'exact', added: 1, removed: 1 },
      body: { lineNumbers: false },
    });
    const done = editModel(inputAt(callOf('files', 'call_7')));
    expect(done).toMatchObject({
      stats: { kind: 'exact', added: 1, removed: 1 },
      body: { lineNumbers: true },
    });
    if (done.kind !== 'diff' || done.body?.kind !== 'diff') throw new Error('diff expected');
    expect(done.body.hunks[0]?.lines.find((line) => line.kind === 'removed')).toMatchObject({
      oldNumber: 9,
    });
    // The preview opens on the line the edit wrote.
    const added = done.body.hunks[0]?.lines.find((line) => line.kind === 'added')?.newNumber;
    expect(added).toBeDefined();
    expect(touchedLines(done.body.hunks)).toEqual({ first: added, last: added });
    if (running.kind !== 'diff' || running.body?.kind !== 'diff') throw new Error('diff expected');
    expect(touchedLines(running.body.hunks)).toBeUndefined();
    expect(editModel(inputAt(callOf('files', 'call_8')))).toMatchObject({
      state: 'error',
      body: { kind: 'plain' },
    });
  });

  test('the editor: view as read, create and str_replace as diffs, a folder listing plain', () => {
    expect(editorModel(inputAt(callOf('files', 'call_9')))).toMatchObject({
      kind: 'read',
      body: {
        kind: 'excerpt',
        firstLine: 1,
        lines: [
          '//! Report helpers.',
          '',
          '/// Adds two numbers.',
          expect.any(String),
          expect.any(String),
          '}',
        ],
      },
    });
    expect(editorModel(inputAt(callOf('files', 'call_10')))).toMatchObject({
      kind: 'read',
      body: { kind: 'plain' },
    });
    expect(editorModel(inputAt(callOf('files', 'call_11'), 'start'))).toMatchObject({
      kind: 'diff',
      stats: { kind: 'coarse', lines: 2 },
    });
    expect(editorModel(inputAt(callOf('files', 'call_12'), 'start'))).toMatchObject({
      kind: 'diff',
      body: { lineNumbers: false },
    });
    expect(editorModel(inputAt(callOf('files', 'call_12')))).toMatchObject({
      stats: { kind: 'exact', added: 1, removed: 1 },
    });
    expect(editorModel(inputAt(callOf('files', 'call_13'), 'start'))).toMatchObject({
      kind: 'diff',
      body: { kind: 'plain' },
    });
  });
});

describe('search, web, todo, question, run_code', () => {
  test('grep groups by file with counts and lines; glob lists files', () => {
    const content = grepModel(inputAt(callOf('search', 'call_2')));
    expect(content).toMatchObject({ kind: 'search', suffix: { key: 'search.matches' } });
    if (content.kind !== 'search' || content.body?.kind !== 'results')
      throw new Error('results expected');
    expect(content.body.groups[0]).toMatchObject({
      path: 'src/lib.rs',
      lines: expect.arrayContaining([expect.objectContaining({ context: true })]),
    });
    expect(grepModel(inputAt(callOf('search', 'call_1')))).toMatchObject({
      suffix: { key: 'search.files', values: { count: 3 } },
    });
    expect(grepModel(inputAt(callOf('search', 'call_4')))).toMatchObject({
      state: 'error',
      body: { kind: 'plain' },
    });
    expect(globModel(inputAt(callOf('search', 'call_6')))).toMatchObject({
      body: { kind: 'results', groups: [] },
    });
    expect(grepModel(inputAt(callOf('malformed/non-json-arguments', 'call_4')))).toMatchObject({
      kind: 'generic',
    });
  });

  test('a fetched page shows its title, status and text; its source stays source', () => {
    expect(webModel(inputAt(callOf('web', 'call_1')))).toMatchObject({
      summary: '127.0.0.1:8123/guide',
      body: { kind: 'page', page: { title: 'Report guide', status: 200, source: false } },
    });
    expect(webModel(inputAt(callOf('web', 'call_3')))).toMatchObject({
      body: { page: { source: true } },
    });
    expect(webModel(inputAt(callOf('web', 'call_4')))).toMatchObject({
      state: 'error',
      body: { kind: 'plain' },
    });
  });

  test('a todo list is compared with the previous recorded write', () => {
    const first = callOf('tasks', 'call_4');
    const model = todoModel(inputAt(callOf('tasks', 'call_5')), first.arguments);
    expect(model).toMatchObject({
      kind: 'todo',
      rows: [
        { id: 'changes', previousStatus: 'in_progress', added: false, moved: false },
        { id: 'write', added: false, moved: true },
        { id: 'group', previousStatus: 'pending', moved: false },
        { id: 'review', added: true },
      ],
      removed: [{ id: 'typos' }],
    });
    expect(todoModel(inputAt(first))).toMatchObject({
      rows: [{ added: false }, {}, {}, {}],
      removed: [],
    });
    expect(todoModel(inputAt(callOf('tasks', 'call_6')))).toMatchObject({ kind: 'generic' });
    expect(todoModel(inputAt(callOf('malformed/non-json-arguments', 'call_6')))).toMatchObject({
      kind: 'generic',
    });
  });

  test('moves are the fewest that give the new order', () => {
    const item = (id: string) => ({ id, content: id, status: 'pending' as const });
    const { rows } = compareTodos(
      [item('b'), item('c'), item('d'), item('a')],
      [item('a'), item('b'), item('c'), item('d')],
    );
    expect(rows.filter((row) => row.moved).map((row) => row.id)).toEqual(['a']);
  });

  test('answers pair with questions by id; an unanswered question invents nothing', () => {
    expect(questionModel(inputAt(callOf('tasks', 'call_7')))).toMatchObject({
      count: 3,
      rows: [
        { id: 'version', answer: ['1.4.0'] },
        { id: 'day', answer: ['Friday morning'] },
        { id: 'kinds', answer: ['features', 'fixes'] },
      ],
    });
    for (const [fixture, callId] of [
      ['tasks', 'call_8'],
      ['interrupts', 'call_2'],
    ] as const) {
      const model = questionModel(inputAt(callOf(fixture, callId)));
      expect(model).toMatchObject({
        state: 'interrupted',
        verdict: { key: 'question.notAnswered' },
      });
      if (model.kind !== 'question') throw new Error('question expected');
      expect(model.rows?.every((row) => row.answer === undefined)).toBe(true);
    }
    // Two questions with one id cannot pair with answers: the generic card.
    expect(questionModel(inputAt(callOf('tasks', 'call_9')))).toMatchObject({
      kind: 'generic',
      state: 'error',
    });
    expect(questionModel(inputAt(callOf('malformed/non-json-arguments', 'call_7')))).toMatchObject({
      kind: 'generic',
    });
  });

  test('run_code shows its code and what it gave back', () => {
    expect(runCodeModel(inputAt(callOf('code-mode', 'call_3')))).toMatchObject({
      state: 'error',
      summary: 'sdk.tool.call("glob", {"pattern": "*.csv"})',
      output: expect.stringContaining('ZeroDivisionError'),
    });
  });
});

describe('denial comes first, direct or nested', () => {
  test.each([
    ['review', 'call_1'],
    ['review', 'call_3'],
    ['review', 'call_6.1'],
  ])('%s %s is an auto-review denial', (fixture, callId) => {
    const node = callOf(fixture, callId);
    expect(isAutoReviewDenied(node.outcome)).toBe(true);
    const model = deniedModel(inputAt(node));
    expect(JSON.stringify(model)).not.toContain('rm -rf build"');
  });

  test('the reason is the one recorded for the person, normalised; none gives the fallback', () => {
    const model = deniedModel(inputAt(callOf('review', 'call_4')));
    expect(model.reason).toBe('no network access from this agent ask the user');
    expect(JSON.stringify(model)).not.toContain('Do not retry');
    expect(normaliseReason('  a\r\n\u2028b\u2029 c \n')).toBe('a  b  c');
  });

  test('showing a reason only trims it and folds each line separator into a space', () => {
    // Each separator is one space (CRLF is one separator); the ends are trimmed.
    expect(normaliseReason('\n a\r\nb\rc\nd\u0085e\u2028f\u2029g \r\n')).toBe('a b c d e f g');
    expect(normaliseReason('a\n\nb')).toBe('a  b');
    // Nothing more: spaces and tabs inside are the person's own.
    expect(normaliseReason('keep  two spaces\tand a tab')).toBe('keep  two spaces\tand a tab');
    expect(normaliseReason(' \t\r\n ')).toBe('');
    // The rule's reason is blank: the card falls back.
    expect(deniedModel(inputAt(callOf('review', 'call_5')))).toEqual({
      kind: 'denied',
      toolName: 'write',
      refusal: 'policy',
      overridable: false,
      allowed: false,
    });
    // Declined by a person who said nothing: no reason recorded, the fallback.
    expect(deniedModel(inputAt(callOf('review', 'call_3')))).toEqual({
      kind: 'denied',
      toolName: 'bash',
      refusal: 'policy',
      overridable: false,
      allowed: false,
    });
  });
});

describe('the generic card', () => {
  test('it derives from the raw fields only, never from the recorded presentation', () => {
    const deploy = callOf('malformed/unknown-fields', 'call_3');
    expect(deploy.presentation?.remark).toBe('the docs site');
    const model = genericModel(inputAt(deploy));
    expect(model).toMatchObject({
      summary: 'docs',
      output: expect.stringContaining('Deployed 3 files.'),
    });
    expect(JSON.stringify(model)).not.toContain('the docs site');
    const refused = callOf('malformed/non-json-arguments', 'call_1');
    expect(genericModel(inputAt(refused))).toMatchObject({
      summary: '{"path": "src/lib.rs", "old_string":',
      input: '{"path": "src/lib.rs", "old_string": ',
    });
  });

  test('while preparing: no summary and no input', () => {
    expect(genericModel(inputAt(callOf('files', 'call_1'), 'preparing'))).toEqual({
      kind: 'generic',
      state: 'preparing',
      toolName: 'read',
      summary: '',
    });
  });
});

describe('paths', () => {
  test('relative to the working folder, then the home folder as ~', () => {
    expect(
      shortenPath('/home/qilin/workspace/src/a.rs', '/home/qilin/workspace', '/home/qilin'),
    ).toBe('src/a.rs');
    expect(shortenPath('/home/qilin/workspace', '/home/qilin/workspace/', '/home/qilin')).toBe('.');
    expect(shortenPath('/home/qilin/notes.txt', '/home/qilin/workspace', '/home/qilin')).toBe(
      '~/notes.txt',
    );
    expect(shortenPath('/home/qilin', '/w', '/home/qilin/')).toBe('~');
    expect(shortenPath('/home/qilinx/a', '/home/qilin/workspace', '/home/qilin')).toBe(
      '/home/qilinx/a',
    );
    expect(shortenPath('/etc/hosts', '/home/qilin/workspace', '/home/qilin')).toBe('/etc/hosts');
    expect(shortenPath('src/a.rs', '/home/qilin/workspace', '/home/qilin')).toBe('src/a.rs');
    expect(shortenPath('C:\\x', 'C:\\', undefined)).toBe('C:\\x');
  });

  test('summaries shorten, the model keeps the original path for the host', () => {
    const spill = callOf('shell', 'call_8');
    const receipt = spill.outcome?.output as { log_path: string };
    expect(shortenPath(receipt.log_path, '/home/qilin/workspace', '/home/qilin')).toBe(
      '.qilin/sessions/fixture/jobs/job-1.log',
    );
    const node = callOf('files', 'call_1');
    const model = readModel({
      ...inputAt(node),
      arguments: { path: '/home/qilin/elsewhere/a.txt' },
      result: undefined,
      phase: 'start',
    });
    expect(model).toMatchObject({
      path: '/home/qilin/elsewhere/a.txt',
      summary: '~/elsewhere/a.txt',
    });
  });
});

describe('table_query', () => {
  test('the recorded groups, their aggregate, the total and the counts', () => {
    const node = findCall('code-mode', 'table_query', 'ok');
    expect(tableQueryModel(inputAt(node, 'start'))).toEqual({
      kind: 'tableQuery',
      state: 'running',
      summary: 'data/sales.csv',
    });
    expect(tableQueryModel(inputAt(node, 'result'))).toEqual({
      kind: 'tableQuery',
      state: 'ok',
      summary: 'data/sales.csv',
      columns: ['region'],
      measure: 'sum(amount)',
      groups: [
        { cells: ['north'], value: 250.5 },
        { cells: ['south'], value: 199.25 },
      ],
      total: 449.75,
      groupCount: 2,
      matchedRows: 4,
      truncated: false,
    });
  });

  test('a row missing a grouped column, or a value that is no number, is the generic card', () => {
    const node = findCall('code-mode', 'table_query', 'ok');
    const input = inputAt(node, 'result');
    const result = input.result;
    if (result === undefined) throw new Error('the recorded call has a result');
    const output = result.output as Record<string, unknown>;
    for (const rows of [[{ value: 1 }], [{ region: 'north', value: 'many' }]]) {
      const changed = { ...input, result: { ...result, output: { ...output, rows } } };
      expect(tableQueryModel(changed).kind).toBe('generic');
    }
  });
});
