/**
 * The question set for the test bakery (test/knowledge/support/site.ts): what a visitor would ask,
 * in different wordings, with the fact a right answer contains; and questions the site does not
 * answer. Shared by the offline engine's tests and the accuracy benchmark.
 */

export const ANSWERABLE: Array<{ question: string; expect: string[] }> = [
  { question: 'What are your opening hours?', expect: ['7 am', '3 pm'] },
  { question: 'When are you open?', expect: ['7 am', '3 pm'] },
  { question: 'What time do you close on Saturday?', expect: ['3 pm'] },
  { question: 'Are you open on Sundays?', expect: ['closed'] },
  { question: 'Hi, what time do you open?', expect: ['7 am'] },
  { question: 'How much is a croissant?', expect: ['$3.25'] },
  { question: 'What does a sourdough loaf cost?', expect: ['$6.50'] },
  { question: "What's the price of a cappucino?", expect: ['$4.50'] },
  { question: 'Where are you located?', expect: ['12 Harbour Street'] },
  { question: "What's your phone number?", expect: ['(555) 123-4567'] },
  { question: 'What is your email address?', expect: ['hello@sunrisebakery.test'] },
  { question: 'Do you deliver?', expect: ['10 miles'] },
  { question: 'How much does delivery cost?', expect: ['$15'] },
  { question: 'Do you have gluten-free bread?', expect: ['Tuesdays and Fridays'] },
  { question: 'Do you have vegan options?', expect: ['vegan'] },
  { question: 'Can I pay by credit card?', expect: ['credit'] },
  { question: 'Where can I park?', expect: ['parking'] },
  { question: 'Can I bring my dog?', expect: ['patio'] },
  { question: 'Can I order online?', expect: ['two days'] },
  { question: 'How much is a wedding cake?', expect: ['$350'] },
  { question: 'How far in advance should I order a custom cake?', expect: ['48 hours'] },
  { question: 'Who founded the bakery?', expect: ['Maria', 'Tom'] },
  { question: 'When was the bakery founded?', expect: ['1998'] },
  { question: 'Do you do catering for parties?', expect: ['10 to 200'] },
  { question: 'Can I cancel a cake order?', expect: ['24 hours'] },
  { question: 'Do you have oat milk?', expect: ['oat'] },
  { question: 'Do you make birthday cakes?', expect: ['birthdays'] },
];

export const UNANSWERABLE = [
  'Do you have wifi?',
  'Do you sell pizza?',
  'Is there wheelchair access?',
  'Do you offer yoga classes?',
  'Who is the mayor of Riverton?',
  'Do you have a loyalty card?',
  'Do you sell bicycles?',
];

/** Facts of the site that must never appear in an "I don't know" answer. */
export const SITE_FACTS = ['$', 'Harbour', '555', '7 am', '3 pm', 'sunrisebakery', 'Riverton', 'Maria'];
