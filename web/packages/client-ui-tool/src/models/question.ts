import { message, type Message } from '@qilin-agent/i18n';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, clip, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { plainBody, stateOf, type PlainBody } from './outcome';

/** One question, with its answer once there is one. */
export interface QuestionRow {
  readonly id: string;
  readonly question: string;
  readonly options?: readonly string[];
  /** The answer; absent while waiting, and for a question that was not answered. */
  readonly answer?: readonly string[];
}

/** The card of a `question` call. */
export interface QuestionModel {
  readonly kind: 'question';
  readonly state: CallState;
  /** The question, for the row of a call asking one. */
  readonly summary?: string;
  /** How many questions, for the row of a call asking several. */
  readonly count?: number;
  /** The questions and answers, paired by id. */
  readonly rows?: readonly QuestionRow[];
  /** The verdict of a question that got no answer (dismissed or interrupted). */
  readonly verdict?: Message;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

function questionsOf(value: unknown): QuestionRow[] {
  const rows = new Fields(value, 'arguments').list('questions').map((raw) => {
    const item = new Fields(raw, 'questions[]');
    const options = item.optionalList('options');
    if (options !== undefined && !options.every((option) => typeof option === 'string')) {
      throw new Unsupported('questions[].options');
    }
    item.optionalFlag('multi_select');
    return {
      id: item.text('id'),
      question: item.text('question'),
      ...(options === undefined ? {} : { options: options as string[] }),
    };
  });
  if (rows.length === 0 || new Set(rows.map((row) => row.id)).size !== rows.length) {
    throw new Unsupported('the questions have no ids of their own');
  }
  return rows;
}

/**
 * The question card: each question with its answer, paired by the question's stable id (while
 * the call waits for them, the questions are in the request's note under the card). A
 * question that was dismissed or interrupted shows its verdict and the questions, never an
 * invented answer. Answers that do not pair one to one with the questions fall back to the
 * generic card.
 */
export function questionModel(input: CardInput): QuestionModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'question', state };
  try {
    const questions = questionsOf(input.arguments);
    const first = questions[0] as QuestionRow;
    const base = {
      kind: 'question' as const,
      state,
      ...(questions.length === 1
        ? { summary: clip(first.question, 100) }
        : { count: questions.length }),
    };
    // While the call waits for answers, the request's note under the card lists the questions.
    if (input.result === undefined)
      return input.pending === undefined ? { ...base, rows: questions } : base;
    if (state === 'interrupted')
      return { ...base, rows: questions, verdict: message('question.notAnswered') };
    if (state !== 'ok') return { ...base, body: plainBody(input) };
    const answers = new Map<string, readonly string[]>();
    for (const raw of new Fields(input.result.output, 'output').list('answers')) {
      const answer = new Fields(raw, 'answers[]');
      const id = answer.text('id');
      const given = answer.list('answer');
      if (!given.every((part) => typeof part === 'string') || answers.has(id))
        throw new Unsupported('answers[]');
      answers.set(id, given as string[]);
    }
    if (answers.size !== questions.length || !questions.every((q) => answers.has(q.id))) {
      throw new Unsupported('the answers do not pair with the questions');
    }
    return { ...base, rows: questions.map((q) => ({ ...q, answer: answers.get(q.id) ?? [] })) };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
