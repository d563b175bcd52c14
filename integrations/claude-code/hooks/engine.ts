// clm-policy's engine module for Claude Code's plugin engine (checked with Claude Code
// 2.1.332; the API is early access). It decides nothing: after each turn, and before each
// compaction, it runs `clm-policy hook claude-code --engine` with a JSON object on standard
// input and does what the JSON answer says (clm_policy/agents/hooks/engine.py):
//
// - turn.complete: `compact` — compact now with the policy's focus as the instructions;
//   `ask` — submit the prompt that asks the model for its handoff (the request itself comes
//   with it, unseen, from clm-policy's UserPromptSubmit hook; that turn's Stop hook commits
//   the reply); `apply` — compact to apply the committed handoff in place.
// - session.compact: `replace` — the conversation becomes clm-policy's seed of the handoff;
//   `append` — the seed follows Claude Code's own summary.
// - every answer: `status`, pinned in Claude Code's footer ($.ui.status); one toast when it
//   acts.
//
// It acts only in an interactive session: `claude -p` refuses `$.session.compact`, so there
// (and where Claude Code refuses a compaction, or clm-policy cannot be run) the command hooks
// do what they do without it. CLM_POLICY_ENGINE tells them the engine acts.
import type { EngineInterface, Register } from 'claude-code'

const COMMAND = ['clm-policy', 'hook', 'claude-code', '--engine']
const CALL_MS = 30_000
const ASK_AFTER_MS = 200
const MODES = ['replace', 'append', 'clear']

type Answer = {
  act?: string
  status?: string
  idle?: string
  instructions?: string
  prompt?: string
  toast?: string
  seed?: string
}

// Whether the engine acts in this session: an interactive one, until Claude Code refuses.
let acting = false
// While the engine's own compaction runs: what its session.compact hook answered, shown once
// the compaction has settled (a toast drawn during it is not seen).
let compacting: Answer | undefined

// One line in clm-policy's hook log, where clm-policy itself cannot write it.
async function logLine($: EngineInterface, line: string): Promise<void> {
  const script =
    'd="${XDG_STATE_HOME:-$HOME/.local/state}/clm-policy"; mkdir -p "$d" && ' +
    'printf "%s %s\\n" "$(date +%Y-%m-%dT%H:%M:%S%z)" "$1" >> "$d/hook.log"'
  const one = line.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ') // one line
  try {
    await $.process.run(['sh', '-c', script, 'sh', `claude-code engine: ${one}`])
  } catch {
    // nowhere else to say it: the status says it
  }
}

async function idle($: EngineInterface, why: string): Promise<Answer> {
  await logLine($, why)
  return { act: 'none', idle: why, status: `idle: ${why}` }
}

// Runs `clm-policy hook claude-code --engine` with the call's JSON; its JSON answer, or an
// idle answer saying why there is none.
async function call(
  $: EngineInterface,
  name: string,
  mode: string,
  fields: Record<string, unknown>,
): Promise<Answer> {
  let event: Record<string, unknown>
  try {
    const info = await $.session.info()
    event = {
      hook_event_name: name,
      session_id: await $.session.id(),
      transcript_path: info.transcriptPath,
      cwd: await $.session.cwd(),
      model: await $.session.model(),
      handoff: mode,
      ...fields,
    }
  } catch (err) {
    return idle($, `the session could not be read (${String(err)})`)
  }
  let ran
  try {
    ran = await $.process.run(COMMAND, { stdin: JSON.stringify(event), timeoutMs: CALL_MS })
  } catch (err) {
    const text = String(err)
    if (/not found|ENOENT|cannot start|could not start|no such file/i.test(text)) {
      return idle($, 'clm-policy is not on PATH')
    }
    return idle($, `clm-policy did not answer within ${CALL_MS / 1000} s (${text.slice(0, 200)})`)
  }
  if (ran.exitCode !== 0) {
    return idle($, `clm-policy exited ${ran.exitCode}: ${ran.stderr.trim().slice(0, 200)}`)
  }
  try {
    const answer = JSON.parse(ran.stdout) as Answer
    if (typeof answer !== 'object' || answer === null) throw new Error('not an object')
    return answer
  } catch {
    return idle($, `clm-policy answered no JSON: ${ran.stdout.trim().slice(0, 200)}`)
  }
}

async function submit($: EngineInterface, text: string): Promise<void> {
  try {
    await $.prompt.submit({ text })
  } catch (err) {
    await refused($, 'submit the handoff prompt', err)
  }
}

function show($: EngineInterface, answer: Answer): void {
  if (typeof answer.status === 'string' && answer.status !== '') $.ui.status(answer.status)
}

function toast($: EngineInterface, answer: Answer): void {
  if (typeof answer.toast === 'string' && answer.toast !== '') $.ui.toast(answer.toast)
}

// Claude Code refused what the answer asked (a turn running, compaction switched off, a
// headless session): the command hooks advise again, and the status says why.
async function refused($: EngineInterface, what: string, err: unknown): Promise<void> {
  acting = false
  await $.env.set('CLM_POLICY_ENGINE', undefined)
  const why = `Claude Code refused to ${what} (${String(err).slice(0, 200)}); the hooks advise instead`
  await logLine($, why)
  $.ui.status(`idle: ${why}`)
}

export const register: Register = (on, options) => {
  const chosen = String((options as Record<string, unknown>).handoff ?? 'replace')
  const mode = MODES.includes(chosen) ? chosen : 'replace'

  on('session.start', async ($, e, next) => {
    const started = await next(e)
    try {
      acting = (await $.session.surfaces()).length > 0 // none in `claude -p`
      if (acting) {
        await $.env.set('CLM_POLICY_ENGINE', mode)
        show($, await call($, 'engine.start', mode, {}))
      }
    } catch (err) {
      acting = false
      await logLine($, `session.start: ${String(err)}`)
    }
    return started
  })

  on('turn.complete', async ($, e, next) => {
    const done = await next(e)
    if (!acting || e.agentId !== undefined || e.reason !== 'answer') return done
    let context: unknown
    try {
      context = (await $.session.usage()).context
    } catch (err) {
      show($, await idle($, `the session's usage could not be read (${String(err)})`))
      return done
    }
    const answer = await call($, 'engine.turn', mode, { context })
    show($, answer)
    if (answer.act === 'compact' || answer.act === 'apply') {
      compacting = {}
      try {
        const compacted = await $.session.compact({ instructions: answer.instructions })
        const said = compacting.seed !== undefined ? compacting : answer
        if (compacted.skip === undefined) {
          toast($, said)
          show($, said)
        } else await logLine($, `the compaction was skipped: ${compacted.skip}`)
      } catch (err) {
        await refused($, 'compact', err)
      } finally {
        compacting = undefined
      }
    } else if (answer.act === 'ask' && typeof answer.prompt === 'string') {
      toast($, answer)
      const text = answer.prompt
      // a turn of its own, once this one has ended: from a timer, so that it is submitted
      // to an idle session (not queued behind this turn)
      $.clock.after(ASK_AFTER_MS, () => submit($, text))
    }
    return done
  })

  on('session.compact', async ($, e, next) => {
    if (!acting || e.agentId !== undefined || e.trigger === 'precompute') return next(e)
    const answer = await call($, 'engine.compact', mode, {
      trigger: e.trigger,
      instructions: e.instructions ?? null,
    })
    if (typeof answer.seed !== 'string' || answer.seed === '') return next(e)
    const seed = { role: 'user' as const, text: answer.seed, toolUses: [] }
    const says = (): void => {
      if (compacting !== undefined) Object.assign(compacting, answer)
      else (toast($, answer), show($, answer)) // a /compact of the person's
    }
    if (answer.act === 'replace') {
      says()
      return { messages: [seed] }
    }
    if (answer.act === 'append') {
      const compacted = await next(e)
      if (compacted.skip !== undefined) return compacted
      says()
      return { ...compacted, messages: [...compacted.messages, seed] }
    }
    return next(e)
  })
}
