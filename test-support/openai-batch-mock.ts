// The mock of OpenAI's (and Azure OpenAI's) Batch API lives with the bench, which runs it too.
export { startOpenAiBatchMock, type LineAnswer, type MockBatch, type MockLine, type OpenAiBatchMock } from '../bench/src/mock-openai-batches.js';
