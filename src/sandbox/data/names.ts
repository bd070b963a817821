export const FIRST = ['Logan', 'Maria', 'Wei', 'Aisha', 'Carlos', 'Emma', 'Noah', 'Olivia', 'Liam', 'Sofia', 'Hiro', 'Priya',
  'Lucas', 'Chloe', 'Mateo', 'Amara', 'Ethan', 'Isla', 'Omar', 'Zoe', 'Ravi', 'Elena', 'Jonas', 'Fatima', 'Kenji', 'Grace',
  'Diego', 'Hannah', 'Ivan', 'Leila', 'Samuel', 'Nina', 'Tomas', 'Yara', 'Victor', 'Mei', 'Andre', 'Clara', 'Felix', 'Ines'];
export const LAST = ['McNeil', 'Garcia', 'Chen', 'Khan', 'Silva', 'Johnson', 'Müller', 'Rossi', 'Okafor', 'Tanaka', 'Patel',
  'Dubois', 'Novak', 'Kowalski', 'Andersen', 'Haddad', 'Nguyen', 'Costa', 'Schmidt', 'Moreau', 'Ivanova', 'Lopez', 'Kim',
  'Brown', 'Ahmed', 'Santos', 'Larsen', 'Fischer', 'Murphy', 'Sato'];
export const DEPARTMENTS = ['Sales', 'Marketing', 'Engineering', 'Finance', 'Human Resources', 'Operations', 'Legal',
  'Customer Success', 'IT', 'Procurement'];
export const REGIONS = ['Americas', 'EMEA', 'APAC', 'North America'];
export const JOB_PROFILES = ['Software Engineer', 'Senior Software Engineer', 'Account Executive', 'Financial Analyst',
  'HR Business Partner', 'Operations Manager', 'Paralegal', 'Customer Success Manager', 'IT Support Specialist',
  'Buyer', 'Marketing Specialist', 'Director'];
export const LOCATIONS = ['San Francisco', 'New York', 'London', 'Dublin', 'Paris', 'Berlin', 'Tokyo', 'Singapore', 'Sydney', 'Toronto'];
export const SKILLS = ['Java', 'TypeScript', 'SQL', 'Negotiation', 'Public Speaking', 'Excel', 'Project Management',
  'Data Analysis', 'Python', 'Leadership', 'Accounting', 'Spanish', 'Contract Law', 'Kubernetes'];
export const COMPANIES = ['Global Modern Services, Inc. (USA)', 'Global Modern Services Ltd (UK)', 'GMS GmbH (Germany)'];
export const CUSTOMER_NAMES = ['Acme Corp', 'Globex', 'Initech', 'Umbrella Health', 'Stark Industries', 'Wayne Enterprises',
  'Hooli', 'Soylent Foods', 'Vandelay Imports', 'Wonka Confections', 'Tyrell Systems', 'Cyberdyne', 'Oscorp', 'Massive Dynamic',
  'Pied Piper', 'Aperture Labs', 'Black Mesa', 'Gringotts', 'Monarch Solutions', 'Nakatomi Trading', 'Duff Beverages',
  'Prestige Worldwide', 'Dunder Mifflin', 'Bluth Company', 'Sterling Cooper'];
export const SUPPLIERS = ['Office Depot', 'Staples', 'Dell Technologies', 'Amazon Business', 'WeWork', 'Salesforce',
  'Adobe', 'FedEx', 'Grainger', 'CDW'];
