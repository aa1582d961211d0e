import { en } from 'zod/locales';
import { config } from 'zod/mini';

// zod/mini carries no error messages of its own; without these every problem would read
// "Invalid input". zod's English messages name what was expected, never the value received.
config(en());
