// The engine module's own tests: `claude plugin test integrations/claude-code` runs them in
// Claude Code's engine (2.1.332), the module loaded from this folder. The hooks a test
// registers stand for the engine beneath the module: here they answer its calls on `$`
// (the session, `clm-policy` as a process) and record what it does (compactions, prompts,
// the status, toasts, the environment the command hooks get).
import { expect, mock, test } from 'claude-code/testing'

const TURN = {
  answer: 'Done.',
  durationMs: 1000,
  isAborted: false,
  turnId: 'turn-1',
  reason: 'answer' as const,
}
const STATUS = 'ctx 72% 130k/180k · handoff at 83% · compact · claude-code/coding'

type World = {
  calls: Record<string, unknown>[]
  compacted: (string | undefined)[]
  submitted: string[]
  statuses: (string | undefined)[]
  toasts: string[]
  env: Record<string, string | undefined>
  logged: string[]
}

// The session beneath the module: interactive (`surfaces`), 130,000 tokens of 200,000, and
// clm-policy answering `answers` in turn (a string: the process fails with it as stderr;
// 'missing': the process cannot start, as Claude Code 2.1.332 words it). `refuse`: the
// engine refuses compactions with that reason.
function session(
  on: any,
  answers: unknown[],
  surfaces: string[] = ['terminal'],
  refuse?: string,
): World {
  const world: World = {
    calls: [],
    compacted: [],
    submitted: [],
    statuses: [],
    toasts: [],
    env: {},
    logged: [],
  }
  on('session.start', (_: unknown, e: { cwd: string }) => ({ cwd: e.cwd }))
  on('session.surfaces', () => ({ value: surfaces }))
  on('session.id', () => ({ value: 'sess-1' }))
  on('session.cwd', () => ({ value: '/work/project' }))
  on('session.model', () => ({ value: 'claude-sonnet-4-5' }))
  on('session.info', () => ({ value: { transcriptPath: '/work/t.jsonl' } }))
  on('session.usage', () => ({
    value: {
      startedAt: 0,
      context: { tokens: 130_000, window: 200_000, percent: 65 },
      rateLimits: [],
    },
  }))
  on('env.set', (_: unknown, e: { name: string; value?: string }) => {
    world.env[e.name] = e.value
    return { value: {} }
  })
  on('process.run', (_: unknown, e: { argv: string[]; init?: { stdin?: string } }) => {
    if (e.argv[0] === 'sh') {
      world.logged.push(String(e.argv[e.argv.length - 1]))
      return { value: { exitCode: 0, stdout: '', stderr: '', isStdoutTruncated: false, isStderrTruncated: false } }
    }
    world.calls.push(JSON.parse(e.init?.stdin ?? '{}'))
    const answer = answers.shift()
    if (answer === 'missing') {
      return { deny: 'failed to start: ENOENT: Executable not found in $PATH: "clm-policy"' }
    }
    if (typeof answer === 'string') {
      return { value: { exitCode: 3, stdout: '', stderr: answer, isStdoutTruncated: false, isStderrTruncated: false } }
    }
    return {
      value: {
        exitCode: 0,
        stdout: JSON.stringify(answer ?? { act: 'none', status: STATUS }),
        stderr: '',
        isStdoutTruncated: false,
        isStderrTruncated: false,
      },
    }
  })
  on('session.compact', (_: unknown, e: { instructions?: string }) => {
    if (refuse !== undefined) throw new Error(refuse) // nothing answers: the call rejects
    world.compacted.push(e.instructions)
    return { messages: [{ role: 'user', text: 'the summary', toolUses: [] }] }
  })
  on('turn.complete', (_: unknown, e: { answer: string }) => ({ text: e.answer }))
  on('prompt.submit', (_: unknown, e: { text: string }) => {
    world.submitted.push(e.text)
    return { text: e.text }
  })
  on('ui.status', (_: unknown, e: { text?: string }) => {
    world.statuses.push(e.text)
    return { value: undefined }
  })
  on('ui.toast', (_: unknown, e: { text: string }) => {
    world.toasts.push(e.text)
    return { value: undefined }
  })
  return world
}

test('after a turn past the compact threshold it compacts with the policy focus', async ($, on) => {
  const focus = 'keep the goal (calc.py); the next step (run the tests)'
  const world = session(on, [
    { act: 'none', status: 'ctx n/a (no usage yet) · compact at 67% · claude-code/coding' },
    { act: 'compact', instructions: focus, toast: 'compacting: context 72% (130,000 of 180,000)', status: STATUS },
  ])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  expect(world.env.CLM_POLICY_ENGINE).toBe('replace')
  await $.turn.complete(TURN as any)
  expect(world.compacted).toEqual([focus])
  expect(world.toasts).toEqual(['compacting: context 72% (130,000 of 180,000)'])
  expect(world.statuses.at(-1)).toBe(STATUS)
  const turn = world.calls[1] ?? {}
  expect(turn.hook_event_name).toBe('engine.turn')
  expect(turn.session_id).toBe('sess-1')
  expect(turn.transcript_path).toBe('/work/t.jsonl')
  expect(turn.handoff).toBe('replace')
  expect(turn.context).toEqual({ tokens: 130_000, window: 200_000, percent: 65 })
})

test('a turn that continues shows the status and nothing more', async ($, on) => {
  const world = session(on, [{ act: 'none', status: 'start' }, { act: 'none', status: STATUS }])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  await $.turn.complete(TURN as any)
  expect(world.compacted).toEqual([])
  expect(world.submitted).toEqual([])
  expect(world.toasts).toEqual([])
  expect(world.statuses).toEqual(['start', STATUS])
})

test('past the handoff point it submits the prompt that asks for the handoff, once the turn has ended', async ($, on) => {
  const clock = mock.clock(on)
  const world = session(on, [
    { act: 'none', status: 'start' },
    { act: 'ask', prompt: 'Write your handoff for the next session now.', toast: 'the policy hands off', status: STATUS },
  ])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  await $.turn.complete(TURN as any)
  expect(world.toasts).toEqual(['the policy hands off'])
  expect(world.submitted).toEqual([]) // not inside the turn's end: from a timer after it
  await clock.advance(200)
  expect(world.submitted).toEqual(['Write your handoff for the next session now.'])
})

test('a headless session (claude -p) is left to the command hooks', async ($, on) => {
  const world = session(on, [], [])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: false } as any)
  await $.turn.complete(TURN as any)
  expect(world.calls).toEqual([])
  expect(world.env.CLM_POLICY_ENGINE).toBeUndefined()
})

test("a subagent's turn and an interrupted one call nothing", async ($, on) => {
  const world = session(on, [{ act: 'none', status: 'start' }])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  await $.turn.complete({ ...TURN, agentId: 'agent-1' } as any)
  await $.turn.complete({ ...TURN, reason: 'aborted', isAborted: true } as any)
  expect(world.calls.map(c => c.hook_event_name)).toEqual(['engine.start'])
})

test('the handoff option reaches clm-policy, and append keeps Claude Code\'s summary', { options: { handoff: 'append' } } as any, async ($: any, on: any) => {
  const world = session(on, [
    { act: 'none', status: 'start' },
    { act: 'append', seed: '# Handoff: calc.py', toast: 'handed off', status: STATUS },
  ])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  const done = await $.session.compact({
    instructions: 'keep calc.py',
    trigger: 'manual',
    messages: [{ role: 'user', text: 'write calc.py', toolUses: [] }],
  } as any)
  expect((done.messages ?? []).map((m: { text: string }) => m.text)).toEqual([
    'the summary',
    '# Handoff: calc.py',
  ])
  expect(world.calls.map(c => c.handoff)).toEqual(['append', 'append'])
})

test('clm-policy missing from PATH: one log line, the status says why, the turn goes on', async ($, on) => {
  const world = session(on, ['missing', 'missing'])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  const done = await $.turn.complete(TURN as any)
  expect(done.text).toBe('Done.')
  expect(world.compacted).toEqual([])
  expect(world.statuses.at(-1)).toBe('idle: clm-policy is not on PATH')
  expect(world.logged).toEqual([
    'claude-code engine: clm-policy is not on PATH',
    'claude-code engine: clm-policy is not on PATH',
  ])
})

test('a failing or garbled clm-policy call leaves the session untouched', async ($, on) => {
  const world = session(on, [{ act: 'none', status: 'start' }, 'Traceback: boom'])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  await $.turn.complete(TURN as any)
  expect(world.compacted).toEqual([])
  expect(world.statuses.at(-1)).toBe('idle: clm-policy exited 3: Traceback: boom')
  expect(world.logged).toEqual(['claude-code engine: clm-policy exited 3: Traceback: boom'])
})

test('a compaction Claude Code refuses hands the advice back to the command hooks', async ($, on) => {
  const world = session(
    on,
    [
      { act: 'none', status: 'start' },
      { act: 'compact', instructions: 'keep it', status: STATUS },
    ],
    ['terminal'],
    'compaction is switched off in this session (DISABLE_COMPACT)',
  )
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  await $.turn.complete(TURN as any)
  expect(world.env.CLM_POLICY_ENGINE).toBeUndefined()
  expect(String(world.statuses.at(-1))).toContain('idle: Claude Code refused to compact')
  expect(world.logged.length).toBe(1)
})

test('session.compact replaces the conversation by the seed', async ($, on) => {
  const world = session(on, [
    { act: 'none', status: 'start' },
    { act: 'replace', seed: '# Handoff: the goal is calc.py', toast: 'handed off', status: STATUS },
  ])
  await $.session.start({ cwd: '/work/project', surface: 'terminal', isInteractive: true } as any)
  const done = await $.session.compact({ instructions: 'apply' } as any)
  expect((done.messages ?? []).map((m: { text: string }) => m.text)).toEqual([
    '# Handoff: the goal is calc.py',
  ])
  expect(world.compacted).toEqual([]) // answered in the engine's place: core never ran
  expect(world.toasts).toEqual(['handed off'])
})
